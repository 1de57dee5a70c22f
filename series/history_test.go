package series_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/series"
)

// TestRevisionStepsMatchGit walks the series' real history, v12 to v16: for
// each step the range-diff kpatch computes equals git range-diff of the
// branches gen --branch records, and the interdiff equals git diff of their
// tips (the folds of v14 and the drops of v14 and v15 included).
func TestRevisionStepsMatchGit(t *testing.T) {
	if testing.Short() {
		t.Skip("generates five revisions and runs git range-diff four times; run without -short")
	}
	dir := debianTree(t)
	clone := filepath.Join(t.TempDir(), "linux")
	if out, err := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	gen := map[int]*series.Series{}
	for v := 12; v <= 16; v++ {
		s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: clone, Base: "v6.12", Version: v})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateBranch(fmt.Sprintf("v%d", v)); err != nil {
			t.Fatal(err)
		}
		gen[v] = s
	}
	for v := 13; v <= 16; v++ {
		t.Run(fmt.Sprintf("v%d-v%d", v-1, v), func(t *testing.T) {
			got := seriestest.RangeDiff(t, gen[v-1], gen[v])
			want := gitIn(t, clone, "range-diff", "--no-color", fmt.Sprintf("v6.12..v%d", v-1), fmt.Sprintf("v6.12..v%d", v))
			if got != want {
				t.Errorf("range-diff differs from git range-diff:\n%s", firstDiff(got, want))
			}
			if got, want := gen[v].Interdiff(gen[v-1]), gitIn(t, clone, "diff", fmt.Sprintf("v%d", v-1), fmt.Sprintf("v%d", v)); got != want {
				t.Errorf("interdiff differs from git diff:\n%s", firstDiff(got, want))
			}
		})
	}
}
