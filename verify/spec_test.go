package verify

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/templates/linux"
)

// edit replaces old with new in one file of a spec copy; old must occur
// exactly once.
type edit struct{ file, old, new string }

// specCopy exports the built-in spec (as kpatch spec -o does), applies
// testdata/v11-fixed.diff when fixed is set, then the edits.
//
// v11-fixed.diff ("diff -ruN" of the exported spec and a corrected copy)
// corrects the text v11 renders: the v11 patch declarations and notes, the
// templates' text v11 takes, and v11/order with the lockdep assertion as a
// patch of its own (x86-segment-base-lockdep). Its edits are not guarded by
// revision, so later revisions of a corrected copy are not what was posted:
// the tests generate only v11 from it.
func specCopy(t testing.TB, fixed bool, edits ...edit) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "spec")
	if err := linux.Export(dir); err != nil {
		t.Fatal(err)
	}
	if fixed {
		applyDiff(t, dir, "testdata/v11-fixed.diff")
	}
	for _, e := range edits {
		p := filepath.Join(dir, e.file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), e.old); n != 1 {
			t.Fatalf("%s: %q occurs %d times, want once", e.file, e.old, n)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(b), e.old, e.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// applyDiff applies a "diff -ruN old new" to dir: paths lose their first
// component, and a file the diff empties is removed.
func applyDiff(t testing.TB, dir, diff string) {
	t.Helper()
	data, err := os.ReadFile(diff)
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(data))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %d files, %v", diff, len(files), err)
	}
	for _, f := range files {
		name := f.NewName
		if name == "" {
			name = f.OldName
		}
		_, rel, _ := strings.Cut(name, "/")
		p := filepath.Join(dir, rel)
		old, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := gitdiff.Apply(&out, bytes.NewReader(old), f); err != nil {
			t.Fatalf("%s: %s: %v", diff, rel, err)
		}
		if out.Len() == 0 {
			os.Remove(p)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
