package series_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/internal/oracle"
	"kpatch/internal/seriestest"
	"kpatch/series"
)

// twoRevisions generates v11 and v12 against Debian's 6.12 in a shared
// clone and records both as branches v11 and v12 there, once per test
// process: the tests that compare them with git only read the clone and
// the two series.
func twoRevisions(t *testing.T) (clone string, s11, s12 *series.Series) {
	t.Helper()
	dir := debianTree(t)
	revisions.once.Do(func() { revisions.clone, revisions.s11, revisions.s12, revisions.err = makeTwoRevisions(dir) })
	if revisions.err != nil {
		t.Fatal(revisions.err)
	}
	return revisions.clone, revisions.s11, revisions.s12
}

var revisions struct {
	once     sync.Once
	clone    string // in a temporary directory TestMain removes
	s11, s12 *series.Series
	err      error
}

func makeTwoRevisions(dir string) (clone string, s11, s12 *series.Series, err error) {
	tmp, err := os.MkdirTemp("", "kpatch-series-revisions-")
	if err != nil {
		return "", nil, nil, err
	}
	scratch = append(scratch, tmp)
	clone = filepath.Join(tmp, "linux")
	if out, err := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", dir, clone).CombinedOutput(); err != nil {
		return "", nil, nil, fmt.Errorf("git clone: %v\n%s", err, out)
	}
	gen := func(v int) (*series.Series, error) {
		s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: clone, Base: "v6.12", Version: v})
		if err != nil {
			return nil, err
		}
		return s, s.CreateBranch(fmt.Sprintf("v%d", v))
	}
	if s11, err = gen(11); err != nil {
		return "", nil, nil, err
	}
	if s12, err = gen(12); err != nil {
		return "", nil, nil, err
	}
	return clone, s11, s12, nil
}

// scratch are the directories TestMain removes.
var scratch []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range scratch {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	attrs := filepath.Join(debianTree(t), ".gitattributes")
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "core.attributesFile=" + attrs, "-c", "core.abbrev=12"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// TestInterdiffMatchesGit: the interdiff from v11 to v12 equals git diff
// between the two branches' tips, and the cover letter kpatch gen
// --interdiff 11 writes ends as git format-patch --interdiff=v11's.
func TestInterdiffMatchesGit(t *testing.T) {
	clone, s11, s12 := twoRevisions(t)
	got := s12.Interdiff(s11)
	want := gitIn(t, clone, "diff", "v11", "v12")
	if got != want {
		t.Errorf("interdiff differs from git diff v11 v12:\n%s", firstDiff(got, want))
	}
	for _, path := range []string{"arch/x86/kernel/stacktrace.c", "arch/x86/events/core.c", "include/linux/unwind_deferred.h"} {
		if !strings.Contains(got, "diff --git a/"+path+" ") {
			t.Errorf("the interdiff does not show %s", path)
		}
	}
	out := t.TempDir()
	gitIn(t, clone, "format-patch", "-q", "--cover-letter", "--thread", "-v", "12", "--interdiff=v11", "--base=v6.12", "-o", out, "v6.12..v12")
	gb, err := os.ReadFile(filepath.Join(out, "v12-0000-cover-letter.patch"))
	if err != nil {
		t.Fatal(err)
	}
	cover := series.AppendToCover(seriestest.Messages(t, s12)[0], series.InterdiffTitle(11), got)
	tailOf := func(s string) string {
		_, after, _ := strings.Cut(s, "files changed")
		after, _, _ = strings.Cut(after, "\n-- \n")
		return after
	}
	if g, w := tailOf(cover.Text), tailOf(string(gb)); g != w {
		t.Errorf("cover letter after the diffstat differs from git format-patch --interdiff:\n%s", firstDiff(g, w))
	}
}

// TestInterdiffReproducesSeed: the seed's cover letter ends with the
// "Diff between v10 and v11" section. v10's final files are recovered by
// applying that section in reverse to v11's (the created files rebuilt from
// the seed, checked against its blob ids; include/linux/entry-common.h as
// kpatch generates it on 6.12), and the diff kpatch computes from those v10
// files to v11's equals the section: byte for byte for the files the series
// creates, and apart from the line numbers and blob ids that the base decides
// for entry-common.h.
func TestInterdiffReproducesSeed(t *testing.T) {
	th := seed(t)
	_, section, ok := strings.Cut(th.Cover.Body, "Diff between v10 and v11:\n")
	if !ok {
		t.Fatal("the seed's cover letter has no \"Diff between v10 and v11\" section")
	}
	section = strings.TrimLeft(strings.TrimRight(section, "\n"), "\n") + "\n"
	created, err := oracle.CreatedFiles(th)
	if err != nil {
		t.Fatal(err)
	}
	s11, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: debianTree(t), Base: "v6.12", Version: 11})
	if err != nil {
		t.Fatal(err)
	}
	v11 := map[string][]byte{}
	for path, vs := range created {
		v11[path] = vs[len(vs)-1].Content
	}
	v11["include/linux/entry-common.h"] = s11.FinalFiles()["include/linux/entry-common.h"]
	files, _, err := gitdiff.Parse(strings.NewReader(section))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 7 {
		t.Fatalf("the section diffs %d files, want 7", len(files))
	}
	v10 := map[string][]byte{}
	for p, c := range v11 {
		v10[p] = c
	}
	for _, f := range files {
		cur, ok := v11[f.NewName]
		if !ok {
			t.Fatalf("%s: not a file of v11", f.NewName)
		}
		old, err := reverseApply(cur, f)
		if err != nil {
			t.Fatalf("%s: %v", f.NewName, err)
		}
		v10[f.NewName] = old
		if _, isCreated := created[f.NewName]; isCreated && !strings.HasPrefix(oracle.BlobHash(old), f.OldOIDPrefix) {
			t.Errorf("%s: recovered v10 blob %s, the section says %s", f.NewName, oracle.BlobHash(old)[:12], f.OldOIDPrefix)
		}
	}
	got := series.TreeDiff(v10, v11, nil)
	if g, w := normalizeBase(got), normalizeBase(section); g != w {
		t.Errorf("interdiff differs from the seed's section:\n%s", firstDiff(g, w))
	}
	// Byte for byte for everything but entry-common.h.
	strip := func(s string) string {
		i := strings.Index(s, "diff --git a/include/linux/entry-common.h")
		j := strings.Index(s, "diff --git a/include/linux/unwind_deferred.h")
		return s[:i] + s[j:]
	}
	if g, w := strip(got), strip(section); g != w {
		t.Errorf("interdiff of the created files differs from the seed's section:\n%s", firstDiff(g, w))
	}
}

var (
	hunkHeader = regexp.MustCompile(`(?m)^@@ -\d+(,\d+)? \+\d+(,\d+)? @@`)
	indexLine  = regexp.MustCompile(`(?m)^index [0-9a-f]+\.\.[0-9a-f]+`)
)

// normalizeBase removes what the base tree decides: hunk line numbers and
// blob ids.
func normalizeBase(s string) string {
	return indexLine.ReplaceAllString(hunkHeader.ReplaceAllString(s, "@@ N @@"), "index X..Y")
}

// reverseApply undoes the hunks of f on cur, finding each hunk's new side
// near its stated position (the base may shift lines) and replacing it with
// the old side.
func reverseApply(cur []byte, f *gitdiff.File) ([]byte, error) {
	lines := strings.SplitAfter(string(cur), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	shift := 0
	for _, fr := range f.TextFragments {
		var oldSide, newSide []string
		for _, l := range fr.Lines {
			switch l.Op {
			case gitdiff.OpContext:
				oldSide, newSide = append(oldSide, l.Line), append(newSide, l.Line)
			case gitdiff.OpDelete:
				oldSide = append(oldSide, l.Line)
			case gitdiff.OpAdd:
				newSide = append(newSide, l.Line)
			}
		}
		at := -1
		want := int(fr.NewPosition) - 1 + shift
		for d := 0; d < len(lines) && at < 0; d++ {
			for _, i := range []int{want - d, want + d} {
				if i >= 0 && i+len(newSide) <= len(lines) && strings.Join(lines[i:i+len(newSide)], "") == strings.Join(newSide, "") {
					at = i
					break
				}
			}
		}
		if at < 0 {
			return nil, fmt.Errorf("hunk at +%d not found", fr.NewPosition)
		}
		out := append(append(append([]string{}, lines[:at]...), oldSide...), lines[at+len(newSide):]...)
		shift += at - (int(fr.NewPosition) - 1 + shift)
		shift += len(oldSide) - len(newSide)
		lines = out
	}
	return []byte(strings.Join(lines, "")), nil
}
