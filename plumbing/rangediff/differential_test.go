package rangediff_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/rangediff"
)

// TestDifferential compares DiffContext with git range-diff on random
// pairs of series versions built from real kernel files (patches kept,
// dropped, changed, inserted, reworded, moved, given another author with
// a dotted or accented name; diffs with bytes that are not UTF-8, form
// feeds, renames and mode changes), the patches read from git
// format-patch's mails as kpatch reads a posted series.
// -kpatch.cases=N sets the number of series pairs.
func TestDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(*gittest.Seed, 5))
	pairs := gittest.CasesOr(5, 100)
	sources := gittest.KernelSources(t, r, 12)
	patches, marks := 0, map[string]int{}
	for k := 0; k < pairs; k++ {
		h := gittest.GenerateSeries(t, r, sources, 4+r.IntN(12))
		old, new := readSeries(t, h.Dir, "main..old"), readSeries(t, h.Dir, "main..new")
		want := string(gittest.Run(t, h.Dir, "-c", "core.abbrev=12", "range-diff", "--no-color", "main..old", "main..new"))
		got, err := rangediff.DiffContext(context.Background(), old, new, rangediff.Options{CreationFactor: rangediff.DefaultCreationFactor})
		if err != nil {
			t.Fatal(err)
		}
		patches += len(old) + len(new)
		for _, m := range []string{" = ", " ! ", " < ", " > "} {
			marks[m] += strings.Count(want, m)
		}
		if got != want {
			t.Errorf("seed %d pair %d differs from git range-diff:\n--- got\n%s\n--- git\n%s", *gittest.Seed, k, got, want)
		}
	}
	t.Logf("%d series pairs, %d patches compared with git range-diff; pairs seen: %v", pairs, patches, marks)
}
