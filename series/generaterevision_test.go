package series_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"kpatch/series"
)

// TestGenerateRevision: an earlier revision generated on the tree a series
// was generated on is the one Generate gives, byte for byte, on a git tree
// and a plain directory, and the tree is not opened again: after the
// plain directory stops passing for a kernel tree (its top-level Kconfig,
// which no revision reads, removed), Generate refuses it but
// GenerateRevision still works.
func TestGenerateRevision(t *testing.T) {
	ctx := context.Background()
	plain := syntheticTree(t, func(_ string, b []byte) []byte { return b })
	for _, tc := range []struct {
		name, tree, base string
	}{
		{"git", debianTree(t), "v6.12"},
		{"plain", plain, "synthetic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := series.Options{Tree: tc.tree, Base: tc.base, Version: 12}
			s12, err := series.Generate(ctx, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.Version = 11
			want, err := series.Generate(ctx, opt)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "plain" {
				if err := os.Remove(filepath.Join(plain, "Kconfig")); err != nil {
					t.Fatal(err)
				}
				if _, err := series.Generate(ctx, opt); err == nil {
					t.Fatal("Generate accepts the directory without Kconfig: the test shows nothing")
				}
			}
			got, err := s12.GenerateRevision(ctx, 11)
			if err != nil {
				t.Fatal(err)
			}
			gm, wm := got.Messages(), want.Messages()
			if len(gm) != len(wm) {
				t.Fatalf("%d messages, Generate gives %d", len(gm), len(wm))
			}
			for i := range gm {
				if gm[i] != wm[i] {
					t.Errorf("message %d (%s) differs from Generate's", i, wm[i].Filename)
				}
			}
			if _, err := s12.GenerateRevision(ctx, 9); err == nil {
				t.Error("revision 9 generated")
			}
		})
	}
}

// BenchmarkEarlierRevision: v11 generated for gen --interdiff 11 on v12's
// Debian tree, by opening the tree again (Generate, as gen did) and on the
// tree already open (GenerateRevision).
func BenchmarkEarlierRevision(b *testing.B) {
	ctx := context.Background()
	opt := series.Options{Tree: benchTree(b), Base: "v6.12", Version: 12}
	s12, err := series.Generate(ctx, opt)
	if err != nil {
		b.Fatal(err)
	}
	opt.Version = 11
	b.Run("Generate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := series.Generate(ctx, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GenerateRevision", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := s12.GenerateRevision(ctx, 11); err != nil {
				b.Fatal(err)
			}
		}
	})
}
