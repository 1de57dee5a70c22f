package diffstat

import (
	"math/rand/v2"
	"testing"

	"kpatch/internal/gittest"
)

// TestDifferential renders the diffstat of random commits of real kernel
// files (renames, mode changes, created and deleted files, binary
// contents) and compares with git diff --stat --summary at git
// format-patch's width and git's default one. -kpatch.cases=N sets the
// number of commits.
func TestDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(*gittest.Seed, 17))
	commits := gittest.CasesOr(15, 300)
	h := gittest.Generate(t, r, gittest.KernelSources(t, r, 12), []string{"one"}, commits)
	compared := 0
	for i, c := range h.Branches["one"] {
		for _, renames := range []string{"-M", "--no-renames"} {
			files := filesFromGit(t, h.Dir, renames, c.ID+"^", c.ID)
			for _, w := range []string{"72", "80"} {
				want := runGit(t, h.Dir, "diff", renames, "--stat="+w, "--summary", c.ID+"^", c.ID)
				width := 72
				if w == "80" {
					width = 0
				}
				if got := Format(files, width); got != want {
					t.Errorf("seed %d commit %d %s width %s:\n--- git\n%s--- diffstat\n%s", *gittest.Seed, i, renames, w, want, got)
				}
				compared++
			}
		}
	}
	t.Logf("%d diffstats of %d commits compared with git", compared, commits)
}
