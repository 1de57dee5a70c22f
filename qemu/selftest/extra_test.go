package selftest

import (
	"context"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/series"
)

// TestRevisionRunsExtra: the case list is a property of the revision (its
// self-test facts). v12 (USED bit) must pass faultable_sync by default; v11
// runs it only with --extra; an Override (files replaced for a negative
// test) keeps its series' revision and so its cases.
func TestRevisionRunsExtra(t *testing.T) {
	tree := testenv.KernelTree(t)
	for _, tc := range []struct {
		version int
		want    bool
	}{{11, false}, {12, true}} {
		s, err := Generate(context.Background(), series.Options{Tree: tree, Base: "v6.12", Version: tc.version})
		if err != nil {
			t.Fatal(err)
		}
		if got := RevisionRunsExtra(s); got != tc.want {
			t.Errorf("v%d: RevisionRunsExtra %v, want %v", tc.version, got, tc.want)
		}
		if got := RevisionRunsExtra(Override{SeriesFiles: s}); got != tc.want {
			t.Errorf("v%d: an Override: RevisionRunsExtra %v, want %v", tc.version, got, tc.want)
		}
	}
}
