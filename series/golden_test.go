package series_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/internal/oracle"
	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/mail"
	"kpatch/series"
)

// debianTree returns the cached git tree of Debian's linux-source-6.12,
// building it on first use. The test fails (it does not skip) when the
// tarball is missing: README's test command installs it.
func debianTree(t *testing.T) string {
	t.Helper()
	return testenv.KernelTree(t)
}

func seed(t *testing.T) *mail.Thread {
	t.Helper()
	th, err := oracle.ParseSeed()
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// parsed is one patch mail of the generated series, parsed like the seed.
func parseMessages(t *testing.T, s *series.Series) (*mail.Thread, []series.Message) {
	t.Helper()
	msgs := seriestest.Messages(t, s)
	// Render the messages in the seed's thread layout so the same parser
	// reads both: subject, blank, [sender], blank, body.
	var b strings.Builder
	for _, m := range msgs {
		head, body, _ := strings.Cut(m.Text, "\n\n")
		subj := regexp.MustCompile(`(?m)^Subject: (.*(\n .*)*)$`).FindStringSubmatch(head)[1]
		subj = strings.ReplaceAll(subj, "\n ", " ")
		from := regexp.MustCompile(`(?m)^From: (.*)$`).FindStringSubmatch(head)[1]
		if m.Number == 0 {
			b.WriteString(subj + "\n\n")
		}
		b.WriteString(subj + "\n\n[sender]\n\n")
		if m.Number > 0 {
			b.WriteString("From: " + from + "\n\n")
		}
		b.WriteString(body)
	}
	th, err := mail.ParseThread([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return th, msgs
}

type lineChanges struct{ added, deleted []string }

func changesOf(f *gitdiff.File) lineChanges {
	var c lineChanges
	for _, fr := range f.TextFragments {
		for _, l := range fr.Lines {
			switch l.Op {
			case gitdiff.OpAdd:
				c.added = append(c.added, l.Line)
			case gitdiff.OpDelete:
				c.deleted = append(c.deleted, l.Line)
			}
		}
	}
	return c
}

// withoutFunction drops the lines of a function definition that starts with
// a line beginning with start, up to its closing brace: the body of a
// function a patch moves comes from the tree, not from the series.
func withoutFunction(lines []string, start string) []string {
	var out []string
	in := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, start):
			in = true
		case in && strings.HasPrefix(l, "}"):
			in = false
			continue
		}
		if !in {
			out = append(out, l)
		}
	}
	return out
}

// moved lists the functions a patch moves out of the tree: their bodies may
// differ with the base.
var moved = map[int][]string{13: {"static unsigned long get_segment_base(", "unsigned long segment_base_address("}}

func TestGoldenV11AgainstDebian612(t *testing.T) {
	dir := debianTree(t)
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "v6.12", Version: 11})
	if err != nil {
		t.Fatal(err)
	}
	want := seed(t)
	got, _ := parseMessages(t, s)
	if len(got.Patches) != len(want.Patches) {
		t.Fatalf("generated %d patches, the seed has %d", len(got.Patches), len(want.Patches))
	}
	created, err := oracle.CreatedFiles(want)
	if err != nil {
		t.Fatal(err)
	}
	hashes := 0
	for i, wp := range want.Patches {
		gp := got.Patches[i]
		n := wp.Number
		if gp.Title != wp.Title {
			t.Errorf("patch %d subject %q, want %q", n, gp.Title, wp.Title)
		}
		if gp.Author != wp.Author {
			t.Errorf("patch %d author %q, want %q", n, gp.Author, wp.Author)
		}
		if gp.Log != wp.Log {
			t.Errorf("patch %d commit message differs:\n got: %q\nwant: %q", n, gp.Log, wp.Log)
		}
		if gp.Changelog != wp.Changelog {
			t.Errorf("patch %d changelog differs:\n got: %q\nwant: %q", n, gp.Changelog, wp.Changelog)
		}
		if _, ok := moved[n]; !ok && gp.Diffstat != wp.Diffstat {
			t.Errorf("patch %d diffstat differs:\n got:\n%s\nwant:\n%s", n, gp.Diffstat, wp.Diffstat)
		}
		if len(gp.Files) != len(wp.Files) {
			t.Errorf("patch %d touches %d files, want %d", n, len(gp.Files), len(wp.Files))
			continue
		}
		for j, wf := range wp.Files {
			gf := gp.Files[j]
			if gf.NewName != wf.NewName || gf.IsNew != wf.IsNew {
				t.Errorf("patch %d file %d: %s (new %v), want %s (new %v)", n, j, gf.NewName, gf.IsNew, wf.NewName, wf.IsNew)
				continue
			}
			if _, isCreated := created[wf.NewName]; isCreated {
				// Created files: byte for byte, by blob hash, and the
				// hunks exactly as posted.
				if gf.OldOIDPrefix != wf.OldOIDPrefix || gf.NewOIDPrefix != wf.NewOIDPrefix {
					t.Errorf("patch %d %s: index %s..%s, want %s..%s", n, wf.NewName, gf.OldOIDPrefix, gf.NewOIDPrefix, wf.OldOIDPrefix, wf.NewOIDPrefix)
				} else {
					hashes++
				}
				if gs, ws := fragments(gf), fragments(wf); gs != ws {
					t.Errorf("patch %d %s hunks differ:\n got:\n%s\nwant:\n%s", n, wf.NewName, gs, ws)
				}
				continue
			}
			gc, wc := changesOf(gf), changesOf(wf)
			for _, start := range moved[n] {
				gc.added, gc.deleted = withoutFunction(gc.added, start), withoutFunction(gc.deleted, start)
				wc.added, wc.deleted = withoutFunction(wc.added, start), withoutFunction(wc.deleted, start)
			}
			if strings.Join(gc.added, "") != strings.Join(wc.added, "") || strings.Join(gc.deleted, "") != strings.Join(wc.deleted, "") {
				t.Errorf("patch %d %s: changed lines differ:\n got +%q -%q\nwant +%q -%q", n, wf.NewName, gc.added, gc.deleted, wc.added, wc.deleted)
			}
		}
	}
	if hashes != 39 {
		t.Errorf("%d created-file index lines match the seed, want all 39", hashes)
	}
	if c := checkNeighbours(t, s, got, want, nil); c == 0 {
		t.Error("no block's neighbours were checked")
	} else {
		t.Logf("%d neighbouring lines checked", c)
	}
}

func fragments(f *gitdiff.File) string {
	var b strings.Builder
	for _, fr := range f.TextFragments {
		b.WriteString(fr.String())
	}
	return b.String()
}

// TestGoldenCoverLetter checks the cover letter against the seed's: the
// text with its "Changes since v10" list, the shortlog grouped by author,
// and the total diffstat with its create-mode lines. The seed's diffstat was
// printed 80 columns wide (not git format-patch's 72), so files and counts
// are compared, not the graph; the files a moved function touches differ
// with the base.
func TestGoldenCoverLetter(t *testing.T) {
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: debianTree(t), Base: "v6.12", Version: 11})
	if err != nil {
		t.Fatal(err)
	}
	want := seed(t).Cover.Body
	got := seriestest.Messages(t, s)[0].Text
	_, got, _ = strings.Cut(got, "\n\n") // the body
	// The text: the seed's, up to the shortlog, without the note about the
	// v10..v11 diff it appended (kpatch has no v10 to diff against).
	wantText, _, _ := strings.Cut(want, "Josh Poimboeuf (8):")
	wantText = strings.Replace(wantText, "[ Full diff between v11 and 10 at end of this message. ]\n\n", "", 1)
	if !strings.HasPrefix(got, strings.TrimRight(wantText, "\n")+"\n\n") {
		t.Errorf("cover text differs from the seed's:\n%s", firstDiff(got, wantText))
	}
	// Shortlog: the same authors, counts and subjects in the same order.
	shortlog := func(text string) string {
		var out []string
		for _, l := range strings.Split(text, "\n") {
			if regexp.MustCompile(`^\S.* \(\d+\):$`).MatchString(l) || regexp.MustCompile(`^\s+\S`).MatchString(l) && !strings.Contains(l, "|") && !strings.Contains(l, "mode 100644") && !strings.Contains(l, "changed,") {
				out = append(out, strings.TrimSpace(l))
			}
		}
		return strings.Join(out, "\n")
	}
	_, wantTail, _ := strings.Cut(want, "Josh Poimboeuf (8):")
	wantTail = "Josh Poimboeuf (8):" + wantTail
	wantTail, _, _ = strings.Cut(wantTail, "Diff between v10 and v11")
	_, gotTail, _ := strings.Cut(got, "Josh Poimboeuf (8):")
	gotTail = "Josh Poimboeuf (8):" + gotTail
	if g, w := shortlog(gotTail), shortlog(wantTail); !strings.Contains(g, w) {
		t.Errorf("shortlog differs:\n got:\n%s\nwant:\n%s", g, w)
	}
	// Diffstat: files, counts and create-mode lines.
	statLine := regexp.MustCompile(`(?m)^ (\S+)\s+\|\s+(\d+) [+-]*$`)
	stats := func(text string) map[string]string {
		m := map[string]string{}
		for _, sm := range statLine.FindAllStringSubmatch(text, -1) {
			m[sm[1]] = sm[2]
		}
		return m
	}
	gs, ws := stats(gotTail), stats(wantTail)
	if len(gs) != len(ws) || len(ws) != 23 {
		t.Errorf("diffstat lists %d files, the seed %d (want 23)", len(gs), len(ws))
	}
	for f, n := range ws {
		if f == "arch/x86/events/core.c" || f == "arch/x86/kernel/ptrace.c" {
			continue // the moved get_segment_base() is shorter in 6.12
		}
		if gs[f] != n {
			t.Errorf("diffstat of %s: %s, want %s", f, gs[f], n)
		}
	}
	createRE := regexp.MustCompile(`(?m)^ create mode 100644 .*$`)
	if g, w := createRE.FindAllString(gotTail, -1), createRE.FindAllString(wantTail, -1); strings.Join(g, "\n") != strings.Join(w, "\n") || len(w) != 11 {
		t.Errorf("create-mode lines:\n got %q\nwant %q", g, w)
	}
	if !strings.Contains(got, "\nbase-commit: "+s.Tree.Commit.String()+"\n") {
		t.Error("no base-commit line for a git base")
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ":\n  got: " + g[i] + "\n want: " + w[i]
		}
	}
	return "one is a prefix of the other"
}

// TestGoldenOnShiftedBase generates v11 against a base that differs from
// every real one: the files the series edits get extra lines at the top
// (and MAINTAINERS an extra section), so every line number and much of the
// context moves. The added and removed lines of every patch must stay those
// of the posted series.
func TestGoldenOnShiftedBase(t *testing.T) {
	src := debianTree(t)
	dir := t.TempDir()
	for _, p := range baseFiles(t) {
		b, err := os.ReadFile(filepath.Join(src, p))
		if err != nil {
			t.Fatal(err)
		}
		var pre string
		switch {
		case strings.HasSuffix(p, ".c") || strings.HasSuffix(p, ".h"):
			pre = "/* a line of another tree */\n#include <linux/other.h>\n\n"
		case p == "MAINTAINERS":
			b = []byte(strings.Replace(string(b), "\nUTIL-LINUX PACKAGE\n", "\nUSERSPACE ZSWAP HELPERS\nM:\tSomeone <someone@example.org>\nS:\tMaintained\nF:\tmm/uzswap.c\n\nUTIL-LINUX PACKAGE\n", 1))
		default:
			pre = "# a line of another tree\n\n"
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), append([]byte(pre), b...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "shifted", Version: 11})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := parseMessages(t, s)
	want := seed(t)
	for i, wp := range want.Patches {
		gp := got.Patches[i]
		if len(gp.Files) != len(wp.Files) {
			t.Errorf("patch %d touches %d files, want %d", wp.Number, len(gp.Files), len(wp.Files))
			continue
		}
		for j, wf := range wp.Files {
			gc, wc := changesOf(gp.Files[j]), changesOf(wf)
			for _, start := range moved[wp.Number] {
				gc.added, gc.deleted = withoutFunction(gc.added, start), withoutFunction(gc.deleted, start)
				wc.added, wc.deleted = withoutFunction(wc.added, start), withoutFunction(wc.deleted, start)
			}
			if strings.Join(gc.added, "") != strings.Join(wc.added, "") || strings.Join(gc.deleted, "") != strings.Join(wc.deleted, "") {
				t.Errorf("patch %d %s: changed lines differ:\n got +%q -%q\nwant +%q -%q", wp.Number, wf.NewName, gc.added, gc.deleted, wc.added, wc.deleted)
			}
		}
	}
	// The section this base adds sorts right after the one patch 1 adds.
	except := map[string]string{"1 MAINTAINERS USERSPACE STACK UNWINDING below": "USERSPACE ZSWAP HELPERS\n"}
	if c := checkNeighbours(t, s, got, want, except); c == 0 {
		t.Error("no block's neighbours were checked")
	} else {
		t.Logf("%d neighbouring lines checked", c)
	}
}

// block is a run of added lines in a patch's post-image, with the lines of
// the post-image just above and below it ("" with has false at a hunk's
// edge).
type block struct {
	text               string
	above, below       string
	hasAbove, hasBelow bool
}

// blocksOf lists the blocks of added lines of a file's diff. Deleted lines
// are not part of the post-image: a block's neighbours are the lines a
// reader of the new file sees around it.
func blocksOf(f *gitdiff.File) []block {
	var out []block
	for _, fr := range f.TextFragments {
		var post []string
		var added []bool
		for _, l := range fr.Lines {
			if l.Op == gitdiff.OpDelete {
				continue
			}
			post = append(post, l.Line)
			added = append(added, l.Op == gitdiff.OpAdd)
		}
		for i := 0; i < len(post); {
			if !added[i] {
				i++
				continue
			}
			j := i
			for j < len(post) && added[j] {
				j++
			}
			b := block{text: strings.Join(post[i:j], "")}
			if i > 0 {
				b.above, b.hasAbove = post[i-1], true
			}
			if j < len(post) {
				b.below, b.hasBelow = post[j], true
			}
			out = append(out, b)
			i = j
		}
	}
	return out
}

// hasLine reports whether content has line (with its newline) as a whole line.
func hasLine(content []byte, line string) bool {
	c := "\n" + string(content)
	return strings.Contains(c, "\n"+line) && (strings.HasSuffix(line, "\n") || strings.HasSuffix(c, "\n"+line))
}

// checkNeighbours checks that every block a patch inserts into a file that
// exists before it has the seed's line just above and just below it,
// whenever the seed's line exists in the file the patch changes (a line the
// base lacks cannot be there). Blocks are matched by their text; the blocks
// of a moved function are matched by their first line, as the moved body
// comes from the tree.
//
// except overrides the seed's line for a base that differs from every real
// one on purpose: its keys are "PATCH FILE FIRSTLINE above|below".
func checkNeighbours(t *testing.T, s *series.Series, got, want *mail.Thread, except map[string]string) (checked int) {
	t.Helper()
	created, err := oracle.CreatedFiles(want)
	if err != nil {
		t.Fatal(err)
	}
	for i, wp := range want.Patches {
		n := wp.Number
		old := map[string][]byte{}
		for _, fc := range s.Patches[i].Files {
			old[fc.Path] = fc.Old
		}
		for j, wf := range wp.Files {
			if _, isCreated := created[wf.NewName]; isCreated || j >= len(got.Patches[i].Files) {
				continue
			}
			gblocks := blocksOf(got.Patches[i].Files[j])
			seen := map[string]int{} // blocks of the same text match in order
			for _, wb := range blocksOf(wf) {
				k := seen[wb.text]
				seen[wb.text]++
				var same []*block
				for m := range gblocks {
					if gblocks[m].text == wb.text {
						same = append(same, &gblocks[m])
					}
				}
				if len(same) == 0 && len(moved[n]) > 0 {
					for m := range gblocks {
						if firstLine(gblocks[m].text) == firstLine(wb.text) {
							same = append(same, &gblocks[m])
						}
					}
				}
				if k >= len(same) {
					t.Errorf("patch %d %s: the block %q (%d of its text) is not inserted", n, wf.NewName, firstLine(wb.text), k+1)
					continue
				}
				gb := same[k]
				for _, side := range []struct {
					name      string
					has       bool
					got, want string
				}{{"above", wb.hasAbove, gb.above, wb.above}, {"below", wb.hasBelow, gb.below, wb.below}} {
					if l, ok := except[fmt.Sprintf("%d %s %s %s", n, wf.NewName, firstLine(wb.text), side.name)]; ok {
						side.has, side.want = true, l
					}
					if !side.has || !hasLine(old[wf.NewName], side.want) {
						continue
					}
					checked++
					if side.got != side.want {
						t.Errorf("patch %d %s: the block %q has %q %s it, the seed %q", n, wf.NewName, firstLine(wb.text), side.got, side.name, side.want)
					}
				}
			}
		}
	}
	return checked
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
