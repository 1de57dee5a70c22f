package series_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
)

// TestStableFixInBase generates testdata/inbase's two patches on two
// plain trees: one without the fix (patch 1 changes kernel/work.c) and one
// that carries it, as a stable tree does (patch 1 changes nothing, is
// marked InBase, and its mail is git format-patch --always's: no "---"
// line). Patch 1 is dated as its declaration says, patch 2 (no Date:)
// after the cover letter; the files are named v1-NNNN as git
// format-patch -v1 names them.
func TestStableFixInBase(t *testing.T) {
	for _, tc := range []struct {
		tree   string
		inBase bool
	}{{"unfixed", false}, {"fixed", true}} {
		t.Run(tc.tree, func(t *testing.T) {
			s, err := seriestest.Generate(context.Background(), seriestest.Options{
				Tree: filepath.Join("testdata", "inbase", tc.tree), Plain: true, Base: "x", SpecDir: filepath.Join("testdata", "inbase", "spec")})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Patches) != 2 {
				t.Fatalf("%d patches", len(s.Patches))
			}
			fix := s.Patches[0]
			if fix.InBase != tc.inBase || (len(fix.Files) == 0) != tc.inBase || s.Patches[1].InBase {
				t.Fatalf("patch 1: InBase %v, %d files; patch 2: InBase %v", fix.InBase, len(fix.Files), s.Patches[1].InBase)
			}
			if got := fix.Date.Format("Mon, 2 Jan 2006 15:04:05 -0700"); got != "Mon, 22 Sep 2025 15:47:00 +0200" {
				t.Errorf("patch 1 dated %s", got)
			}
			if got := s.Patches[1].Date.Format("Mon, 2 Jan 2006 15:04:05 -0700"); got != "Mon, 30 Jun 2025 20:53:23 -0400" {
				t.Errorf("patch 2 dated %s", got)
			}
			msgs := seriestest.Messages(t, s)
			for i, want := range []string{"v1-0000-cover-letter.patch", "v1-0001-work-Fix-the-race.patch", "v1-0002-lib-Add-a-file.patch"} {
				if msgs[i].Filename != want {
					t.Errorf("message %d is %s, want %s", i, msgs[i].Filename, want)
				}
			}
			text := msgs[1].Text
			if got := strings.Contains(text, "\n---\n"); got == tc.inBase {
				t.Errorf("patch 1 has a \"---\" line: %v, want %v:\n%s", got, !tc.inBase, text)
			}
			if !strings.Contains(text, "Signed-off-by: B Fixer <b@example.org>\n") || strings.Contains(text, "diff --git") == tc.inBase {
				t.Errorf("patch 1's mail:\n%s", text)
			}
		})
	}
}
