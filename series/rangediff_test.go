package series_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/series"
)

// TestRangeDiffMatchesGit: the range-diff from v11 to v12 (a dropped patch,
// an added one, changed and identical ones) equals git range-diff on the
// two branches, and the cover letter of kpatch gen --range-diff 11 ends as
// git format-patch --range-diff's.
func TestRangeDiffMatchesGit(t *testing.T) {
	clone, s11, s12 := twoRevisions(t)
	got := seriestest.RangeDiff(t, s11, s12)
	want := gitIn(t, clone, "range-diff", "--no-color", "v6.12..v11", "v6.12..v12")
	if got != want {
		t.Errorf("range-diff differs from git range-diff:\n%s\n--- got:\n%s", firstDiff(got, want), got)
	}
	for _, marker := range []string{" = ", " ! ", " < ", " > "} {
		if !strings.Contains(got, marker) {
			t.Errorf("the range-diff has no %q pair", marker)
		}
	}
	out := t.TempDir()
	gitIn(t, clone, "format-patch", "-q", "--cover-letter", "--thread", "-v", "12", "--range-diff=v6.12..v11", "--base=v6.12", "-o", out, "v6.12..v12")
	gb, err := os.ReadFile(filepath.Join(out, "v12-0000-cover-letter.patch"))
	if err != nil {
		t.Fatal(err)
	}
	cover := series.AppendToCover(seriestest.Messages(t, s12)[0], series.RangeDiffTitle(11), got)
	tailOf := func(s string) string {
		_, after, _ := strings.Cut(s, "files changed")
		after, _, _ = strings.Cut(after, "\n-- \n")
		return after
	}
	if g, w := tailOf(cover.Text), tailOf(string(gb)); g != w {
		t.Errorf("cover letter after the diffstat differs from git format-patch --range-diff:\n%s", firstDiff(g, w))
	}
}
