package diffstat

import (
	"math/rand/v2"
	"testing"

	"kpatch/internal/gittest"
)

// TestDifferential renders the diffstat of random commits of real kernel
// files (renames, mode changes, created and deleted files, binary
// contents) and compares with git's --stat --summary of each commit at git
// format-patch's width and git's default one (one git log for all commits
// at a width). -kpatch.cases=N sets the number of commits.
func TestDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(*gittest.Seed, 17))
	commits := gittest.CasesOr(15, 300)
	h := gittest.Generate(t, r, gittest.KernelSources(t, r, 12), []string{"one"}, commits)
	var ids []string
	for _, c := range h.Branches["one"] {
		ids = append(ids, c.ID)
	}
	compared := 0
	for _, renames := range []string{"-M", "--no-renames"} {
		files := filesFromLog(t, h.Dir, ids, renames)
		for _, w := range []string{"72", "80"} {
			stats := gittest.LogDiffs(t, h.Dir, ids, renames, "--stat="+w, "--summary")
			width := 72
			if w == "80" {
				width = 0
			}
			for i, id := range ids {
				if got, want := Format(files[id], width), stats[id]; got != want {
					t.Errorf("seed %d commit %d %s width %s:\n--- git\n%s--- diffstat\n%s", *gittest.Seed, i, renames, w, want, got)
				}
				compared++
			}
		}
	}
	t.Logf("%d diffstats of %d commits compared with git", compared, commits)
}
