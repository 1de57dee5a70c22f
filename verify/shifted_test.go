package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/series"
)

// shiftedBase writes the synthetic base of series' TestGoldenOnShiftedBase:
// the files the series edits, from Debian 6.12, with extra lines at the top
// (and MAINTAINERS an extra section), as a plain directory.
func shiftedBase(t *testing.T) string {
	src := debianTree(t)
	dir := t.TempDir()
	sp, err := series.LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range series.BaseFiles(sp) {
		b, err := os.ReadFile(filepath.Join(src, p))
		if err != nil {
			t.Fatal(err)
		}
		var pre string
		switch {
		case strings.HasSuffix(p, ".c") || strings.HasSuffix(p, ".h"):
			pre = "/* a line of another tree */\n#include <linux/other.h>\n\n"
		case p == "MAINTAINERS":
			b = []byte(strings.Replace(string(b), "\nUTIL-LINUX PACKAGE\n", "\nUSERSPACE ZSWAP HELPERS\nM:\tSomeone <someone@example.org>\nS:\tMaintained\nF:\tmm/uzswap.c\n\nUTIL-LINUX PACKAGE\n", 1))
		default:
			pre = "# a line of another tree\n\n"
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), append([]byte(pre), b...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestFixedVariantShiftedBase: the corrected v11 has no errors on the
// shifted synthetic base either, and v11 as posted still has Ingo's three
// points there.
func TestFixedVariantShiftedBase(t *testing.T) {
	dir := shiftedBase(t)
	for _, fixed := range []bool{true, false} {
		g, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "shifted", Version: 11, SpecDir: specCopy(t, fixed)})
		if err != nil {
			t.Fatal(err)
		}
		s, err := FromGenerated(g)
		if err != nil {
			t.Fatal(err)
		}
		fs := Run(s, seriesOpts(t))
		if fixed {
			for _, f := range fs {
				if f.Severity == Error || f.ID == "C_EVAL" {
					t.Errorf("corrected, shifted base: patch %d %s: %s: %s", f.Patch, f.Where(), f.ID, f.Message)
				}
			}
			continue
		}
		for _, p := range ingoPoints {
			t.Run("v11/"+p.id, func(t *testing.T) { checkPoints(t, s, fs, []reviewPoint{p}) })
		}
	}
}
