package series_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/series"
)

// TestBaseFiles: a plain directory with series.BaseFiles copied from the
// Debian tree is a base every revision generates on, and without any one
// of them some revision does not: the list is complete and has nothing
// extra, so the tests' synthetic bases may rely on it.
func TestBaseFiles(t *testing.T) {
	sp, err := series.LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	files := series.BaseFiles(sp)
	// generates returns the revisions that do not generate on dir; with
	// firstOnly, it stops at the first (whether any fails is the question).
	generates := func(dir string, firstOnly bool) (failed []int) {
		for _, rev := range sp.Revisions {
			if _, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "synthetic", Version: rev.Version}); err != nil {
				failed = append(failed, rev.Version)
				if firstOnly {
					break
				}
			}
		}
		return failed
	}
	dir := syntheticTree(t, func(_ string, b []byte) []byte { return b })
	if failed := generates(dir, false); len(failed) > 0 {
		t.Fatalf("revisions %v do not generate on %v", failed, files)
	}
	for _, p := range files {
		t.Run(p, func(t *testing.T) {
			path := filepath.Join(dir, p)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(path)
			defer os.WriteFile(path, b, 0o644)
			if failed := generates(dir, true); len(failed) == 0 {
				t.Errorf("every revision generates without %s: it need not be in the list", p)
			}
		})
	}
}
