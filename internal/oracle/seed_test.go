package oracle

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedMissing: without the seed, SeedPath (and so every test that
// reads the seed) fails with one line that says where the thread comes
// from and how to point the tests at it.
func TestSeedMissing(t *testing.T) {
	elsewhere := t.TempDir() // no shared/seed above it
	tests := []struct {
		name string
		env  string // KPATCH_SEED
		want string
	}{
		{"clone elsewhere, KPATCH_SEED unset", "", "no shared/seed/unwind-v11-thread.txt above the working directory and KPATCH_SEED is not set"},
		{"KPATCH_SEED names a missing file", filepath.Join(elsewhere, "nope.txt"), "KPATCH_SEED=" + filepath.Join(elsewhere, "nope.txt")},
	}
	t.Chdir(elsewhere)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KPATCH_SEED", tt.env)
			for name, f := range map[string]func() error{
				"SeedPath":  func() error { _, err := SeedPath(); return err },
				"ParseSeed": func() error { _, err := ParseSeed(); return err },
				"ReadSeed":  func() error { _, err := ReadSeed(); return err },
			} {
				err := f()
				if !errors.Is(err, ErrNoSeed) {
					t.Fatalf("%s: %v, want ErrNoSeed", name, err)
				}
				msg := err.Error()
				for _, w := range []string{tt.want, "<20250625225600.555017347@goodmis.org>", "b4 mbox -o ../shared/seed -n unwind-v11-thread.txt 20250625225600.555017347@goodmis.org",
					"https://lore.kernel.org/all/20250625225600.555017347@goodmis.org/t.mbox.gz", "set KPATCH_SEED to its path"} {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: %q does not say %q", name, msg, w)
					}
				}
				if strings.Contains(msg, "\n") {
					t.Errorf("%s: %q is not one line", name, msg)
				}
			}
		})
	}
}
