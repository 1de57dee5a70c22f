package series_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/internal/seriestest"
	"kpatch/series"
)

// postedDir finds shared/revisions/vN (the posted code of a revision as git
// format-patch files) in the working directory or one of its parents, as
// the seed is found. A missing folder fails the test.
func postedDir(t *testing.T, v int) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "revisions", fmt.Sprintf("v%d", v))
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no shared/revisions/v%d above the working directory: the posted revisions sit beside the repository", v)
		}
		dir = parent
	}
}

type postedPatch struct {
	author, subject, message string
	files                    []*gitdiff.File
}

var (
	changesSince = regexp.MustCompile(`^Chang(es|se) since v\d+`)
	trailerLine  = regexp.MustCompile(`^[A-Za-z-]+-[bB]y: |^Cc: |^Link: |^Fixes: `)
)

// withoutNotes drops the "Changes since" paragraphs a branch's commit
// message carries: the posted mail has them below "---".
func withoutNotes(msg string) string {
	lines := strings.Split(msg, "\n")
	var out []string
	in := false
	for i, l := range lines {
		switch {
		case changesSince.MatchString(l):
			in = true
		case in && i > 0 && lines[i-1] == "" && trailerLine.MatchString(l):
			in = false
		}
		if !in {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func readPostedPatches(t *testing.T, dir string) []postedPatch {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.patch"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var out []postedPatch
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			t.Fatal(err)
		}
		files, preamble, err := gitdiff.Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		h, err := gitdiff.ParsePatchHeader(preamble)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out = append(out, postedPatch{
			author:  h.Author.String(),
			subject: regexp.MustCompile(`^\[PATCH[^]]*\] `).ReplaceAllString(h.Title, ""),
			message: h.Body,
			files:   files,
		})
	}
	return out
}

func parseFiles(t *testing.T, text string) []*gitdiff.File {
	t.Helper()
	files, _, err := gitdiff.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestPostedRevisions generates v12, v13 and v14 against Debian's 6.12 and
// compares every patch with the posted code: subject, author and commit
// message as posted (its "Changes since" notes go below "---"), the same
// files, the index line of every created file (blob ids: byte for byte at
// every patch), and the added and removed lines of every other file.
// v12's posted code is from a branch whose first patch lacks the
// MAINTAINERS entry the posted mails of v11 and v12 carry; that file alone
// is not compared there.
func TestPostedRevisions(t *testing.T) {
	tree := debianTree(t)
	for _, v := range []int{12, 13, 14} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			want := readPostedPatches(t, postedDir(t, v))
			s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: tree, Base: "v6.12", Version: v})
			if err != nil {
				t.Fatal(err)
			}
			msgs := seriestest.Messages(t, s)[1:]
			if len(msgs) != len(want) {
				t.Fatalf("%d patches, %d posted", len(msgs), len(want))
			}
			created, hashes := 0, 0
			for i, w := range want {
				p := s.Patches[i]
				if p.Subject != w.subject || p.Author != w.author {
					t.Errorf("patch %d: %q by %q, posted %q by %q", i+1, p.Subject, p.Author, w.subject, w.author)
				}
				if got, wm := strings.TrimRight(p.Log, "\n"), strings.TrimRight(withoutNotes(w.message), "\n"); got != wm {
					t.Errorf("patch %d: commit message differs:\n got: %q\nwant: %q", i+1, got, wm)
				}
				body := msgs[i].Text
				got := map[string]*gitdiff.File{}
				for _, f := range parseFiles(t, body[strings.Index(body, "\ndiff --git ")+1:]) {
					got[f.NewName] = f
				}
				for _, wf := range w.files {
					if v == 12 && wf.NewName == "MAINTAINERS" {
						continue
					}
					gf := got[wf.NewName]
					delete(got, wf.NewName)
					if gf == nil {
						t.Errorf("patch %d does not touch %s", i+1, wf.NewName)
						continue
					}
					if s.Revision.Spec().Templates[wf.NewName] != nil {
						n := min(len(gf.NewOIDPrefix), len(wf.NewOIDPrefix))
						if n < 7 || gf.NewOIDPrefix[:n] != wf.NewOIDPrefix[:n] {
							t.Errorf("patch %d %s: blob %s, posted %s", i+1, wf.NewName, gf.NewOIDPrefix, wf.NewOIDPrefix)
						} else {
							hashes++
						}
						created++
						continue
					}
					gc, wc := changesOf(gf), changesOf(wf)
					if strings.Join(gc.added, "") != strings.Join(wc.added, "") || strings.Join(gc.deleted, "") != strings.Join(wc.deleted, "") {
						t.Errorf("patch %d %s: changed lines differ:\n got +%q -%q\nwant +%q -%q", i+1, wf.NewName, gc.added, gc.deleted, wc.added, wc.deleted)
					}
				}
				for name := range got {
					if !(v == 12 && name == "MAINTAINERS") {
						t.Errorf("patch %d touches %s, the posted one does not", i+1, name)
					}
				}
			}
			if created == 0 || hashes != created {
				t.Errorf("%d of %d created-file blob ids match the posting", hashes, created)
			}
			t.Logf("%d patches, %d created-file blob ids equal to the posting", len(want), hashes)
		})
	}
}

// TestGitAmEveryRevision applies every revision the spec has, as written
// for Debian's 6.12, with real git am, and checks that the tree git makes
// is the one kpatch computed: TestRealTreeGitAmAndBuild without the
// build, for all revisions.
func TestGitAmEveryRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("git am of every revision (half a minute); run without -short")
	}
	dir := debianTree(t)
	sp, err := series.LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	work := filepath.Join(out, "linux")
	run(t, out, "git", "clone", "-q", "--shared", "--no-checkout", dir, work)
	// Only the files the revisions touch are checked out (a sparse
	// checkout), which git am is content with and which takes seconds.
	gen := map[int]*series.Series{}
	paths := map[string]bool{}
	for _, r := range sp.Revisions {
		s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "v6.12", Version: r.Version})
		if err != nil {
			t.Fatal(err)
		}
		gen[r.Version] = s
		for _, m := range seriestest.Messages(t, s) {
			for _, l := range regexp.MustCompile(`(?m)^diff --git a/(\S+) `).FindAllStringSubmatch(m.Text, -1) {
				paths["/"+l[1]] = true
			}
		}
	}
	sparse := []string{"sparse-checkout", "set", "--no-cone"}
	for p := range paths {
		sparse = append(sparse, p)
	}
	run(t, work, "git", sparse...)
	for _, r := range sp.Revisions {
		t.Run(fmt.Sprintf("v%d", r.Version), func(t *testing.T) {
			s := gen[r.Version]
			files, err := series.WriteDir(filepath.Join(out, fmt.Sprintf("v%d", r.Version)), seriestest.Messages(t, s))
			if err != nil {
				t.Fatal(err)
			}
			run(t, work, "git", "checkout", "-q", "-B", fmt.Sprintf("am-v%d", r.Version), "v6.12")
			run(t, work, "git", append([]string{"am", "-q", "--whitespace=error-all"}, files[1:]...)...)
			if n := strings.TrimSpace(run(t, work, "git", "rev-list", "--count", "v6.12..HEAD")); n != fmt.Sprint(len(r.Patches)) {
				t.Fatalf("git am applied %s commits, want %d", n, len(r.Patches))
			}
			if head := strings.TrimSpace(run(t, work, "git", "rev-parse", "HEAD^{tree}")); head != seriestest.TipTree(t, s) {
				t.Errorf("git am tree %s, kpatch computed %s", head, seriestest.TipTree(t, s))
			}
		})
	}
}
