package hooks

import (
	"os"
	"path/filepath"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/spec"
	"kpatch/templates/linux"
)

// BenchmarkApply places every edit of the newest revision, patch after
// patch, with one Editor, on the files of the Debian 6.12 tree (read once,
// outside the timer), as kpatch gen does: MAINTAINERS (25,000 lines) takes one section,
// arch/x86/Kconfig two selects, kernel/fork.c three statements and an
// include.
func BenchmarkApply(b *testing.B) {
	dir := testenv.KernelTree(b)
	sp, err := spec.Load(linux.FS)
	if err != nil {
		b.Fatal(err)
	}
	rev, err := sp.Revision(0)
	if err != nil {
		b.Fatal(err)
	}
	var edits []spec.Edit
	base := map[string][]byte{}
	for _, p := range rev.Patches {
		for _, e := range p.Edits {
			edits = append(edits, e)
			paths := []string{e.Path}
			if e.Op == "move-function" {
				paths = append(paths, e.Args[1])
			}
			for _, path := range paths {
				if _, ok := base[path]; !ok {
					c, err := os.ReadFile(filepath.Join(dir, path))
					if err != nil {
						b.Fatal(err)
					}
					base[path] = c
				}
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		files := memFiles{}
		for p, c := range base {
			files[p] = c
		}
		ed := NewEditor(files)
		for _, e := range edits {
			if err := ed.Apply(e); err != nil {
				b.Fatal(err)
			}
		}
	}
}
