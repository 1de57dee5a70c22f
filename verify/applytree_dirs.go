package verify

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// Under is gitapply.DirTree's: the files under directory dir as the
// patches so far left them (those of the base they did not remove, and
// those they wrote), so that a patch creating a file where a directory
// of files is fails as git am fails it ("Directory not empty").
func (t *applyTree) Under(dir string) []string {
	var out []string
	prefix := dir + "/"
	for p, f := range t.files {
		if strings.HasPrefix(p, prefix) && !f.gone {
			out = append(out, p)
		}
	}
	if t.base == nil || !t.base.IsDir(dir) {
		return out
	}
	add := func(p string) {
		if _, ok := t.files[p]; !ok {
			out = append(out, p)
		}
	}
	if !t.base.IsGit() {
		filepath.WalkDir(filepath.Join(t.base.Dir, filepath.FromSlash(dir)), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if rel, err := filepath.Rel(t.base.Dir, p); err == nil {
					add(filepath.ToSlash(rel))
				}
			}
			return nil
		})
		return out
	}
	var walk func(d string)
	walk = func(d string) {
		ents, _ := t.base.Entries(d)
		for _, e := range ents {
			if p := path.Join(d, e.Name); e.IsDir() {
				walk(p)
			} else {
				add(p)
			}
		}
	}
	walk(dir)
	return out
}
