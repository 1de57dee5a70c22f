package series_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/series"
	"kpatch/spec"
)

// TestWithVersion: an earlier revision selected from a selection
// (Selection.WithVersion, what gen --interdiff and --range-diff compare
// with) is generated on the tree already open, byte for byte as Generate
// gives it, on a git tree and a plain directory: after the plain directory
// stops passing for a kernel tree (its top-level Kconfig, which no
// revision reads, removed), opening it is refused but the earlier
// revision still generates.
func TestWithVersion(t *testing.T) {
	ctx := context.Background()
	plain := syntheticTree(t, func(_ string, b []byte) []byte { return b })
	for _, tc := range []struct {
		name, tree, base string
	}{
		{"git", debianTree(t), "v6.12"},
		{"plain", plain, "synthetic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel12, err := seriestest.Select(seriestest.Options{Tree: tc.tree, Base: tc.base, Version: 12})
			if err != nil {
				t.Fatal(err)
			}
			want, err := seriestest.Generate(ctx, seriestest.Options{Tree: tc.tree, Base: tc.base, Version: 11})
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "plain" {
				if err := os.Remove(filepath.Join(plain, "Kconfig")); err != nil {
					t.Fatal(err)
				}
				if _, err := seriestest.Select(seriestest.Options{Tree: tc.tree, Base: tc.base, Version: 11}); err == nil {
					t.Fatal("the directory without Kconfig opens: the test shows nothing")
				}
			}
			sel11, err := sel12.WithVersion(11)
			if err != nil {
				t.Fatal(err)
			}
			got, err := series.Generate(ctx, sel11)
			if err != nil {
				t.Fatal(err)
			}
			gm, wm := seriestest.Messages(t, got), seriestest.Messages(t, want)
			if len(gm) != len(wm) {
				t.Fatalf("%d messages, Generate gives %d", len(gm), len(wm))
			}
			for i := range gm {
				if gm[i] != wm[i] {
					t.Errorf("message %d (%s) differs from Generate's", i, wm[i].Filename)
				}
			}
			if _, err := sel12.WithVersion(9); !errors.Is(err, spec.ErrNoRevision) {
				t.Errorf("revision 9: %v, want %v", err, spec.ErrNoRevision)
			}
		})
	}
}

// TestWithVersionStacked: the earlier revisions of a stacked series are
// its own, not the main series' (the x86 series has one revision, v2; v16
// is a revision of the main series it is stacked on), and laid on the same
// revision of the main one.
func TestWithVersionStacked(t *testing.T) {
	for _, tc := range []struct {
		name string
		on   int
	}{{"posted on v16", 0}, {"laid on v15", 15}} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := seriestest.Select(seriestest.Options{Tree: debianTree(t), Base: "v6.12", Stack: "x86", On: tc.on})
			if err != nil {
				t.Fatal(err)
			}
			same, err := sel.WithVersion(2)
			if err != nil {
				t.Fatal(err)
			}
			if same.Revision.Name() != sel.Revision.Name() {
				t.Errorf("x86 v2 from %s is %s", sel.Revision.Name(), same.Revision.Name())
			}
			_, err = sel.WithVersion(16)
			if !errors.Is(err, spec.ErrNoRevision) || !strings.Contains(err.Error(), "x86 v16") {
				t.Errorf("revision 16 of the x86 series: %v, want x86 v16: %v", err, spec.ErrNoRevision)
			}
		})
	}
}

// BenchmarkEarlierRevision: v11 generated for gen --interdiff 11 on v12's
// Debian tree, by opening the tree again and on the tree already open
// (Selection.WithVersion).
func BenchmarkEarlierRevision(b *testing.B) {
	ctx := context.Background()
	opt := seriestest.Options{Tree: benchTree(b), Base: "v6.12", Version: 12}
	sel12, err := seriestest.Select(opt)
	if err != nil {
		b.Fatal(err)
	}
	opt.Version = 11
	b.Run("open again", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := seriestest.Generate(ctx, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("WithVersion", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sel, err := sel12.WithVersion(11)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := series.Generate(ctx, sel); err != nil {
				b.Fatal(err)
			}
		}
	})
}
