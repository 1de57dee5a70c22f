package verify

import (
	"testing"
)

// TestFixedVariant: v11 with the problems the review and verify found
// corrected (testdata/v11-fixed.diff: trailers in order, spelling,
// prefixes, long lines, guards, x86_get_segment_base, the lockdep
// assertion in a patch of its own) has no errors on Debian 6.12, and the
// C checks evaluated everything (no C_EVAL).
func TestFixedVariant(t *testing.T) {
	s := generate(t, specCopy(t, true))
	if len(s.Patches) != 15 {
		t.Fatalf("%d patches, want 15 (the lockdep assertion split out)", len(s.Patches))
	}
	for _, f := range Run(s, seriesOpts(t)) {
		if f.Severity == Error || f.ID == "C_EVAL" {
			t.Errorf("patch %d %s: %s: %s", f.Patch, f.Where(), f.ID, f.Message)
		}
	}
}
