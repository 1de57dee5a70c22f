package verify

import (
	"context"
	"strings"
	"testing"

	"kpatch/plumbing/kernelsrc"
)

// TestCheckpatch runs the tree's checkpatch.pl on v11, generated and as
// posted: its findings map to the right lines (an ENOSYS warning points at
// a line with ENOSYS, a long commit-log line is over 75 columns), and the
// ones verify also reports are merged away.
func TestCheckpatch(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	s := seed(t)
	s.Tree = tree
	for name, s := range map[string]*Series{"generated": v11Generated(t), "seed": s} {
		t.Run(name, func(t *testing.T) {
			own := Run(s, Options{})
			all, err := Checkpatch(context.Background(), s, own, Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := map[string]int{}
			for _, f := range all {
				if f.Source != "checkpatch" {
					continue
				}
				n[f.ID]++
				line, ok := textAt(s, f)
				switch f.ID {
				case "ENOSYS":
					if !ok || !contains(line, "ENOSYS") {
						t.Errorf("ENOSYS at %s: line %q", f.Where(), line)
					}
				case "COMMIT_LOG_LONG_LINE":
					if !ok || len(line) <= 75 {
						t.Errorf("COMMIT_LOG_LONG_LINE at %s: line %q", f.Where(), line)
					}
				}
				if id, dup := checkpatchIDs[f.ID]; dup {
					for _, o := range own {
						if o.ID == id && o.Patch == f.Patch && o.File == f.File && o.Line == f.Line {
							t.Errorf("%s at %s duplicates verify's %s", f.ID, f.Where(), id)
						}
					}
				}
			}
			// checkpatch's Co-developed-by, long-line and repeated-word
			// warnings are verify's own: merged away.
			for _, id := range []string{"BAD_SIGN_OFF", "LONG_LINE", "REPEATED_WORD"} {
				if n[id] != 0 {
					t.Errorf("%d checkpatch %s left after merging", n[id], id)
				}
			}
			if n["ENOSYS"] != 3 || n["COMMIT_LOG_LONG_LINE"] == 0 {
				t.Errorf("checkpatch findings %v: want 3 ENOSYS and some COMMIT_LOG_LONG_LINE", n)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
