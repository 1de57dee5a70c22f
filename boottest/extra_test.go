package boottest

import (
	"context"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
)

// TestRevisionRunsExtra: the case list is a property of the revision (its
// self-test facts). v12 (USED bit) must pass faultable_sync by default; v11
// runs it only with --extra.
func TestRevisionRunsExtra(t *testing.T) {
	tree := testenv.KernelTree(t)
	for _, tc := range []struct {
		version int
		want    bool
	}{{11, false}, {12, true}} {
		s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: tree, Base: "v6.12", Version: tc.version, WithPrerequisite: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := RevisionRunsExtra(s); got != tc.want {
			t.Errorf("v%d: RevisionRunsExtra %v, want %v", tc.version, got, tc.want)
		}
	}
}
