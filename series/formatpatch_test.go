package series_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/series"
)

// TestMatchesGitFormatPatch records the series on a branch of a clone of
// the Debian tree, runs real git format-patch --cover-letter --thread -v 11
// on it (with the kernel's .gitattributes, so hunk headers use diff=cpp),
// and compares git's messages with kpatch's: the "From <sha>" line, From,
// Date, Subject, the commit message, the changelog-free part below "---"
// (diffstat and diff, byte for byte; --always, so that a commit the base
// carries already is written too). Only the headers kpatch chooses
// differently are left out: Message-Id, In-Reply-To, References (kpatch's
// ids do not depend on the base), To and Cc (git was given none), and the
// signature.
func TestMatchesGitFormatPatch(t *testing.T) {
	for _, v := range []int{11, 12} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { matchesGitFormatPatch(t, v, "") })
	}
	// The x86 series stacked on v16: its branch sits on v16's commits, and
	// its cover letter names them after base-commit as
	// prerequisite-patch-id lines, as git format-patch --base writes them.
	t.Run("x86-v2", func(t *testing.T) { matchesGitFormatPatch(t, 0, "x86") })
	// The x86 part as Linux 6.19 merged it, stacked on v16: version 1
	// (git -v1's v1-NNNN names), the commits' author dates, and patch 1
	// an empty commit on Debian's 6.12.118, which carries it (git
	// format-patch --always writes it).
	t.Run("x86-6.19", func(t *testing.T) { matchesGitFormatPatch(t, 0, "x86-6.19") })
}

func matchesGitFormatPatch(t *testing.T, version int, stack string) {
	dir := debianTree(t)
	var clone string
	var s *series.Series
	if stack == "" && (version == 11 || version == 12) {
		// v11 and v12 as the interdiff and range-diff tests have them:
		// generated in a shared clone, branches v11 and v12 created.
		var s11, s12 *series.Series
		clone, s11, s12 = twoRevisions(t)
		s = map[int]*series.Series{11: s11, 12: s12}[version]
	} else {
		clone = filepath.Join(t.TempDir(), "linux")
		if out, err := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", dir, clone).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v\n%s", err, out)
		}
		var err error
		s, err = seriestest.Generate(context.Background(), seriestest.Options{Tree: clone, Base: "v6.12", Version: version, Stack: stack})
		if err != nil {
			t.Fatal(err)
		}
	}
	v := fmt.Sprint(s.Revision.Version)
	branch, commits := "v"+v, "v6.12..v"+v
	if stack != "" {
		branch = stack + "-v" + v
		commits = fmt.Sprintf("%s~%d..%s", branch, len(s.Patches), branch)
		if err := s.CreateBranch(branch); err != nil {
			t.Fatal(err)
		}
	}
	if stack != "" && !strings.Contains(seriestest.Messages(t, s)[0].Text, "\nprerequisite-patch-id: ") {
		t.Errorf("the stacked series' cover letter names no prerequisite")
	}
	out := t.TempDir()
	cmd := exec.Command("git", "-C", clone, "-c", "core.attributesFile="+filepath.Join(dir, ".gitattributes"),
		"-c", "core.abbrev=12", "format-patch", "-q", "--always", "--cover-letter", "--thread", "-v", v, "--base=v6.12", "-o", out, commits)
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git format-patch: %v\n%s", err, o)
	}
	drop := regexp.MustCompile(`(?m)^(Message-Id|In-Reply-To|References): .*\n|^(To|Cc): .*\n(    .*\n)*`)
	normalize := func(text string) string {
		text = drop.ReplaceAllString(text, "")
		if i := strings.LastIndex(text, "\n-- \n"); i >= 0 {
			text = text[:i+1] // the signature names the tool
		}
		return text
	}
	// The cover letter: git writes a blurb placeholder where kpatch writes
	// the revision's text; the shortlog, diffstat and base-commit that
	// follow must be the same.
	cover := seriestest.Messages(t, s)[0]
	gb, err := os.ReadFile(filepath.Join(out, cover.Filename))
	if err != nil {
		t.Fatal(err)
	}
	if g, k := strings.SplitN(string(gb), "\n", 2)[0], strings.SplitN(cover.Text, "\n", 2)[0]; g != k {
		t.Errorf("cover letter's first line %q, git's %q", k, g)
	}
	_, gitTail, ok := strings.Cut(normalize(string(gb)), "*** BLURB HERE ***\n\n")
	_, ourTail, ok2 := strings.Cut(normalize(cover.Text), strings.TrimRight(s.Revision.Cover, "\n")+"\n\n")
	if !ok || !ok2 || gitTail != ourTail {
		t.Errorf("cover letter shortlog/diffstat/base-commit differ from git's:\n%s", firstDiff(ourTail, gitTail))
	}
	for _, m := range seriestest.Messages(t, s)[1:] {
		gb, err := os.ReadFile(filepath.Join(out, m.Filename))
		if err != nil {
			t.Errorf("git did not write %s: %v", m.Filename, err)
			continue
		}
		got := normalize(m.Text)
		// git puts the changelog nowhere: it is not in the commit. Remove
		// kpatch's notes between "---" and the diffstat to compare.
		p := s.Patches[m.Number-1]
		if p.Changelog != "" {
			got = strings.Replace(got, "---\n"+strings.TrimRight(p.Changelog, "\n")+"\n\n", "---\n", 1)
		}
		if want := normalize(string(gb)); got != want {
			t.Errorf("%s differs from git format-patch:\n%s", m.Filename, firstDiff(got, want))
		}
	}
}
