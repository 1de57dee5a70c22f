package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/plumbing/kernelsrc"
	"kpatch/series"
)

// gitHeaderRE is what quilt refresh drops of a git diff: the "diff --git"
// line and git's extended headers, keeping "--- a/x" and "+++ b/x".
var gitHeaderRE = regexp.MustCompile(`(?m)^(diff --git |index [0-9a-f]+\.\.|new file mode |deleted file mode ).*\n`)

// TestQuiltSeries: v11 as a quilt-maintained tree keeps it (each patch's
// diff without "diff --git" and "index" lines, as quilt refresh writes a
// patch imported from git) is checked like the git form: the same
// findings on the code, at the same lines of the tree; a hunk of it that
// does not apply is PATCH_APPLY at the hunk's line.
func TestQuiltSeries(t *testing.T) {
	g := v11Generator(t)
	mbox := series.Mbox(seriestest.Messages(t, g))
	quilt := gitHeaderRE.ReplaceAllString(mbox, "")
	if strings.Contains(quilt, "diff --git") || strings.Count(quilt, "\n--- a/") < 10 {
		t.Fatal("the quilt form still has git's headers, or lost the diffs")
	}
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	code := func(text string) []string {
		path := filepath.Join(t.TempDir(), "v11.mbox")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadMail(path, tree)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range Run(s, seriesOpts(t)) {
			if isCode(f.File) {
				out = append(out, fmt.Sprintf("%d %s %s %s", f.Patch, f.ID, f.Where(), f.Message))
			}
		}
		sort.Strings(out)
		return out
	}
	// a hunk that does not apply is said so at its line, as in git's form
	i := strings.Index(quilt, "--- a/arch/x86/Kconfig\n")
	if i < 0 {
		t.Fatal("no edit of arch/x86/Kconfig in v11")
	}
	h := i + strings.Index(quilt[i:], "\n@@ ") + 1
	ctx := h + strings.Index(quilt[h:], "\n ") + 1
	broken := quilt[:ctx] + " XXX" + quilt[ctx+1:]
	path := filepath.Join(t.TempDir(), "broken.mbox")
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	bs, err := ReadMail(path, tree)
	if err != nil {
		t.Fatal(err)
	}
	pa := only(Run(bs, Options{}), "PATCH_APPLY")
	if hunkLine := 1 + strings.Count(broken[:h], "\n"); len(pa) == 0 || pa[0].Line != hunkLine || !strings.Contains(pa[0].Message, "of arch/x86/Kconfig does not apply to v6.12 (") {
		t.Errorf("PATCH_APPLY: %+v; want one at line %d", pa, hunkLine)
	}
	for _, f := range pa[1:] { // a later hunk on the lines the broken one did not add
		if f.Patch <= pa[0].Patch || !strings.Contains(f.Message, "of arch/x86/Kconfig does not apply to v6.12") {
			t.Errorf("PATCH_APPLY not caused by the broken hunk: %+v", f)
		}
	}
	want, got := code(mbox), code(quilt)
	if len(want) == 0 {
		t.Fatal("no finding on v11's code")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("quilt form:\n%s\ngit form:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
