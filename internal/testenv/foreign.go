package testenv

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Foreign is one of the real kernel series by other authors in
// shared/foreign-series beside the checkout (its README says what they
// are and what a gate owes them).
type Foreign struct {
	Name string // its folder, "amd-tlb"
	// Path is what kpatch reads: the folder of patch files, or the one
	// mbox file of a folder that holds an mbox (clearlinux-mbox).
	Path string
	// Source is the folder's SOURCE.txt: repository, commit, path, authors.
	Source string
}

// ForeignSeries returns the series of shared/foreign-series in name
// order, each as its folder gives it (the four mboxes of mbox/, which
// repeat four of the folders, are left out). Without shared/ above the
// working directory the test fails: the series are part of the
// checkout's surroundings, as the seed thread is.
func ForeignSeries(t testing.TB) []Foreign {
	t.Helper()
	dir := sharedDir(t, "foreign-series")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []Foreign
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "mbox" {
			continue
		}
		f := Foreign{Name: e.Name(), Path: filepath.Join(dir, e.Name())}
		src, err := os.ReadFile(filepath.Join(f.Path, "SOURCE.txt"))
		if err != nil {
			t.Fatalf("foreign series %s: %v", f.Name, err)
		}
		f.Source = string(src)
		mboxes, _ := filepath.Glob(filepath.Join(f.Path, "*.mbox"))
		if len(mboxes) == 1 {
			f.Path = mboxes[0]
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		t.Fatalf("no series in %s", dir)
	}
	return out
}

// sharedDir returns shared/NAME in the working directory or the nearest
// of its parents that has it, failing the test when none has.
func sharedDir(t testing.TB, name string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", name)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		if dir == filepath.Dir(dir) {
			t.Fatalf("no shared/%s above %s: the checkout needs shared/ beside it (%s)", name, wd, "see docs/tests.md")
			return ""
		}
	}
}
