package revision

import "testing"

// TestAddCoverSection: the new "Changes since" section goes above the
// newest one a cover letter has (the way the maintainers stack them), or at
// the end of a cover letter without one (v16's as posted).
func TestAddCoverSection(t *testing.T) {
	const sec = "Changes since v16: LINK\n\n"
	for _, tc := range []struct{ name, in, want string }{
		{"above the newest", "Intro.\n\nChanges since v15: L15\n\n- a\n", "Intro.\n\nChanges since v16: LINK\n\nChanges since v15: L15\n\n- a\n"},
		{"none: at the end", "Intro.\n\nHead SHA1: x\n\n", "Intro.\n\nHead SHA1: x\n\nChanges since v16: LINK\n"},
		{"a misspelt one is not a section", "Changse since v14: L\n", "Changse since v14: L\n\nChanges since v16: LINK\n"},
	} {
		if got := addCoverSection(tc.in, sec); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
