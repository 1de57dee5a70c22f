package series_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/kernelsrc"
	"kpatch/series"
)

// sharedRevisions finds shared/revisions/<name> in the working directory
// or one of its parents, as postedDir does; a missing folder fails.
func sharedRevisions(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "revisions", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no shared/revisions/%s above the working directory: the revisions sit beside the repository", name)
		}
		dir = parent
	}
}

// x86619Series is a file of the series itself: created by it, compared
// section by section and blob by blob.
var x86619Series = regexp.MustCompile(`^(kernel/unwind/|include/linux/unwind_|include/asm-generic/unwind_user\.h$|arch/x86/include/asm/unwind_user\.h$)`)

// x86619Difference is one way a patch generated for Debian's 6.12 differs
// from its commit in a file outside the series, and why. Each must be met:
// a difference that no longer shows is stale.
type x86619Difference struct {
	patch int
	path  string // the commit's path
	why   string
	// ours is the path on 6.12 ("" when the same); empty is set when
	// the patch changes nothing there; committed and want, when set,
	// are a changed line ("+..." or "-...") as committed and as on 6.12.
	ours            string
	empty           bool
	committed, want string
}

var x86619Differences = []x86619Difference{
	{patch: 1, path: "kernel/task_work.c", empty: true,
		why: "Debian's 6.12.118 carries the fix from stable: the patch changes nothing there"},
	{patch: 13, path: "arch/x86/events/core.c",
		why:       "6.12's is_endbr() takes the instruction word, the tip base's a pointer to it",
		committed: "-\tif (user_64bit_mode(regs) && is_endbr((u32 *)auprobe->insn))", want: "-\tif (user_64bit_mode(regs) && is_endbr(*(u32 *)auprobe->insn))"},
	{patch: 13, path: "arch/x86/kernel/uprobes.c",
		why:       "the function moves as 6.12 has it (a stand-in for the is_endbr() that takes a pointer)",
		committed: "+\tif (user_64bit_mode(regs) && is_endbr((u32 *)auprobe->insn))", want: "+\tif (user_64bit_mode(regs) && is_endbr(*(u32 *)auprobe->insn))"},
	{patch: 14, path: "kernel/bpf/stackmap.c",
		why:       "6.12 calls get_perf_callchain() in bpf_get_stackid() inside scoped_guard(preempt), a tab deeper",
		committed: "-\t\t\t\t   false, false);", want: "-\t\t\t\t\t   false, false);"},
	{patch: 14, path: "kernel/bpf/stackmap.c",
		why:       "the same line, changed",
		committed: "+\t\t\t\t   false, false, 0);", want: "+\t\t\t\t\t   false, false, 0);"},
	{patch: 16, path: "include/linux/irq-entry-common.h", ours: "include/linux/entry-common.h",
		why: "6.12 keeps exit_to_user_mode() in entry-common.h (Linux 6.17 moved it)"},
}

// commit is one of ../shared/revisions/x86-6.19's format-patch files.
type commit struct {
	id, author, date, subject, message string
	sections                           map[string]string // diff --git section by path, index lines at 7 hex
}

var (
	index7      = regexp.MustCompile(`(?m)^index ([0-9a-f]{7})[0-9a-f]*\.\.([0-9a-f]{7})[0-9a-f]*`)
	subjectHead = regexp.MustCompile(`^\[PATCH[^]]*\] `)
)

// diffSections splits a patch mail's diff in sections by path (b/ side),
// without the signature, index lines abbreviated to 7 hex digits.
func diffSections(text string) map[string]string {
	if i := strings.LastIndex(text, "\n-- \n"); i >= 0 {
		text = text[:i+1]
	}
	out := map[string]string{}
	parts := regexp.MustCompile(`(?m)^diff --git `).Split(text, -1)
	for _, p := range parts[1:] {
		first, _, _ := strings.Cut(p, "\n")
		path := first[strings.LastIndex(first, " b/")+3:]
		out[path] = index7.ReplaceAllString("diff --git "+p, "index $1..$2")
	}
	return out
}

func readCommits(t *testing.T, dir string) []commit {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "0*.patch"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var out []commit
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		head, body, _ := strings.Cut(text, "\n\n")
		c := commit{sections: diffSections(text)}
		var subject []string
		sc := bufio.NewScanner(strings.NewReader(head))
		for sc.Scan() {
			l := sc.Text()
			switch {
			case strings.HasPrefix(l, "From "):
				c.id = strings.Fields(l)[1]
			case strings.HasPrefix(l, "From: "):
				c.author = strings.TrimPrefix(l, "From: ")
			case strings.HasPrefix(l, "Date: "):
				c.date = strings.TrimPrefix(l, "Date: ")
			case strings.HasPrefix(l, "Subject: "):
				subject = append(subject, strings.TrimPrefix(l, "Subject: "))
			case strings.HasPrefix(l, " ") && len(subject) > 0:
				subject = append(subject, strings.TrimSpace(l))
			}
		}
		c.subject = subjectHead.ReplaceAllString(strings.Join(subject, " "), "")
		c.message, _, _ = strings.Cut(body, "\n---\n")
		out = append(out, c)
	}
	return out
}

// changedLines are the added and removed lines of a diff section, as
// "+..." and "-...".
func changedLines(section string) []string {
	var out []string
	for _, l := range strings.Split(section, "\n") {
		if (strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++ ")) || (strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--- ")) {
			out = append(out, l)
		}
	}
	return out
}

// TestX86619AgainstCommits generates the x86 part as Linux 6.19 merged it
// (kpatch gen --stack x86-6.19, stacked on v16) against Debian's 6.12 and
// compares it with the 16 commits in ../shared/revisions/x86-6.19: author,
// date, subject and message as committed; every diff section of a file of
// the series equal to the committed one (the post-image blob of its index
// line included, so every such file equals the commit's after every
// patch); for every other file the added and removed lines equal the
// commit's, apart from the differences x86619Differences lists and
// explains (each must show); the end state of the series' files equal to
// ../shared/revisions/v6.19 by full blob id; and a cover letter that names
// the posting.
func TestX86619AgainstCommits(t *testing.T) {
	tree := debianTree(t)
	want := readCommits(t, sharedRevisions(t, "x86-6.19"))
	if len(want) != 16 {
		t.Fatalf("%d commits in shared/revisions/x86-6.19, want 16", len(want))
	}
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: tree, Base: "v6.12", Stack: "x86-6.19"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := seriestest.Messages(t, s)
	if len(s.Patches) != len(want) || len(msgs) != len(want)+1 {
		t.Fatalf("%d patches, %d commits", len(s.Patches), len(want))
	}
	if r := s.Revision; r.Series != "x86-6.19" || r.Prerequisite == nil || r.Prerequisite.Version != 16 {
		t.Fatalf("%s, stacked on %v", r.Name(), r.Prerequisite)
	}
	if !strings.Contains(msgs[0].Text, "20250924075948.579302904@infradead.org") {
		t.Errorf("the cover letter does not name the posting")
	}
	met := make([]bool, len(x86619Differences))
	exact := 0
	for i, w := range want {
		n := i + 1
		p := s.Patches[i]
		if p.Subject != w.subject || p.Author != w.author {
			t.Errorf("patch %d: %q by %q, committed %q by %q", n, p.Subject, p.Author, w.subject, w.author)
		}
		if got := p.Date.Format("Mon, 2 Jan 2006 15:04:05 -0700"); got != w.date {
			t.Errorf("patch %d dated %s, committed %s", n, got, w.date)
		}
		if got, wm := strings.TrimRight(p.Log, "\n"), strings.TrimRight(w.message, "\n"); got != wm {
			t.Errorf("patch %d: message differs:\n got: %q\nwant: %q", n, got, wm)
		}
		got := diffSections(msgs[n].Text)
		for path, ws := range w.sections {
			ours, empty := path, false
			subst := map[string]string{}
			for j, d := range x86619Differences {
				if d.patch != n || d.path != path {
					continue
				}
				switch {
				case d.empty:
					empty = true
					met[j] = p.InBase && got[path] == ""
				case d.ours != "":
					ours = d.ours
					met[j] = got[ours] != ""
				default:
					subst[d.committed] = d.want
					if strings.Contains("\n"+got[path]+"\n", "\n"+d.want+"\n") && strings.Contains("\n"+ws+"\n", "\n"+d.committed+"\n") {
						met[j] = true
					}
				}
			}
			gs, ok := got[ours]
			delete(got, ours)
			switch {
			case empty:
				if ok || !p.InBase || len(p.Files) != 0 {
					t.Errorf("patch %d: %s changed, InBase %v, want the patch empty on 6.12.118", n, path, p.InBase)
				}
				continue
			case !ok:
				t.Errorf("patch %d does not change %s", n, ours)
				continue
			case x86619Series.MatchString(path):
				if gs != ws {
					t.Errorf("patch %d %s: the section differs from the commit's:\n%s", n, path, firstDiff(gs, ws))
				} else {
					exact++
				}
				continue
			}
			wl := changedLines(ws)
			for k, l := range wl {
				if r, ok := subst[l]; ok {
					wl[k] = r
				}
			}
			if g := changedLines(gs); strings.Join(g, "\n") != strings.Join(wl, "\n") {
				t.Errorf("patch %d %s: changed lines differ from the commit's:\n%s", n, ours, firstDiff(strings.Join(g, "\n"), strings.Join(wl, "\n")))
			}
		}
		for path := range got {
			t.Errorf("patch %d changes %s, the commit does not", n, path)
		}
	}
	for j, d := range x86619Differences {
		if !met[j] {
			t.Errorf("patch %d %s: the difference %q does not show (stale?)", d.patch, d.path, d.why)
		}
	}
	// The end state: every file of the series after the last patch, by
	// full blob id, against v6.19's.
	sums := readSHA1SUMS(t, filepath.Join(sharedRevisions(t, "v6.19"), "SHA1SUMS"))
	final := map[string][]byte{}
	for _, p := range s.Patches {
		for _, f := range p.Files {
			final[f.Path] = f.New
		}
	}
	checked := 0
	for path, id := range sums {
		if !x86619Series.MatchString(path) {
			continue
		}
		c, ok := final[path]
		if !ok {
			// Unchanged by the 16: v16's end state (the prerequisite).
			c, ok = prerequisiteFile(t, s, path)
		}
		if !ok {
			t.Errorf("%s: no such file after the series", path)
			continue
		}
		if got := kernelsrc.HashObject(kernelsrc.BlobObject, c).String(); got != id {
			t.Errorf("%s after the series: blob %s, v6.19 has %s", path, got, id)
		}
		checked++
	}
	if checked != 9 {
		t.Errorf("%d files of the series checked against v6.19, want 9", checked)
	}
	t.Logf("%d patches; %d sections of the series' files equal to the commits'; %d files equal to v6.19 by blob id", len(want), exact, checked)
}

// prerequisiteFile returns path as the prerequisite's last patch left it.
func prerequisiteFile(t *testing.T, s *series.Series, path string) ([]byte, bool) {
	t.Helper()
	r := s.Revision.Prerequisite
	c, ok, err := r.Render(path, len(r.Patches))
	if err != nil {
		t.Fatal(err)
	}
	return c, ok
}

// readSHA1SUMS reads "<blob id>  <path>" lines.
func readSHA1SUMS(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("%s: %q", file, l)
		}
		out[f[1]] = f[0]
	}
	return out
}

// TestX86619SeriesDiff: kpatch series diff of the generated series (as
// gen writes it) against the commits' format-patch files. On Debian's
// 6.12.118 it pairs patches 2 to 16 with their commits in order; patch 1,
// empty there (the base carries the fix from stable), pairs with none, as
// git range-diff pairs an empty commit with none (checked with git 2.39).
// On the same files with that stable fix taken out again (a 6.12 before
// the backport), all 16 pair, none left over, and patch 1 is "=".
func TestX86619SeriesDiff(t *testing.T) {
	tree := debianTree(t)
	dir := sharedRevisions(t, "x86-6.19")
	for _, tc := range []struct {
		name     string
		plain    bool
		pairs    int
		unpaired []string
	}{
		{name: "Debian 6.12.118", pairs: 15, unpaired: []string{"1<- task_work: Fix NMI race condition", "->1 task_work: Fix NMI race condition"}},
		{name: "without the stable fix", plain: true, pairs: 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := seriestest.Options{Tree: tree, Base: "v6.12", Stack: "x86-6.19"}
			if tc.plain {
				o = seriestest.Options{Tree: withoutStableFix(t, tree), Plain: true, Stack: "x86-6.19"}
			}
			s, err := seriestest.Generate(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if s.Patches[0].InBase == tc.plain {
				t.Fatalf("patch 1 InBase %v on %s", s.Patches[0].InBase, tc.name)
			}
			out := t.TempDir()
			if _, err := series.WriteDir(out, seriestest.Messages(t, s)); err != nil {
				t.Fatal(err)
			}
			got := run(t, ".", testenv.KpatchBinary(t), "series", "diff", out, dir)
			pair := regexp.MustCompile(`(?m)^ *(\d+|-): +(\S+) ([=!<>]) +(\d+|-): +(\S+) (.*)$`)
			pairs := 0
			var unpaired []string
			for _, m := range pair.FindAllStringSubmatch(got, -1) {
				switch m[3] {
				case "=", "!":
					if m[1] != m[4] {
						t.Errorf("patch %s paired with commit %s", m[1], m[4])
					}
					if tc.plain && m[1] == "1" && m[3] != "=" {
						t.Errorf("patch 1 %s its commit, want =", m[3])
					}
					pairs++
				default:
					unpaired = append(unpaired, m[1]+m[3]+m[4]+" "+m[6])
				}
			}
			if pairs != tc.pairs || strings.Join(unpaired, "|") != strings.Join(tc.unpaired, "|") {
				t.Errorf("%d pairs, unpaired %q; want %d pairs, unpaired %q:\n%s", pairs, unpaired, tc.pairs, tc.unpaired, got)
			}
		})
	}
}

// withoutStableFix returns a plain directory with the files the main
// series and the x86-6.19 stack read from tree, kernel/task_work.c as
// 6.12 had it before the stable backport of ef1ea98c8fff (both of its
// hunks taken out again).
func withoutStableFix(t *testing.T, tree string) string {
	t.Helper()
	sp, err := series.LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	r, err := sp.Stack("x86-6.19", 0)
	if err != nil {
		t.Fatal(err)
	}
	files := series.BaseFiles(sp)
	for _, p := range r.Patches {
		for _, e := range p.Edits {
			files = append(files, e.Path)
		}
	}
	dir := t.TempDir()
	for _, p := range files {
		b, err := os.ReadFile(filepath.Join(tree, p))
		if err != nil {
			t.Fatal(err)
		}
		if p == "kernel/task_work.c" {
			b = replaceOnce(t, p, b, "\t/*\n\t * no-op IPI\n\t *\n\t * TWA_NMI_CURRENT will already have set the TIF flag, all\n\t * this interrupt does it tickle the return-to-user path.\n\t */\n",
				"\ttest_and_set_tsk_thread_flag(current, TIF_NOTIFY_RESUME);\n")
			b = replaceOnce(t, p, b, "\t\tset_tsk_thread_flag(current, TIF_NOTIFY_RESUME);\n\t\tirq_work_queue(", "\t\tirq_work_queue(")
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestX86619GitAm applies v16 and then the x86-6.19 series, as gen writes
// them for Debian's 6.12, with the real git am (--empty=keep records
// patch 1, which the base carries already) on a clone of the tree: 26
// commits, and the tree kpatch computed.
func TestX86619GitAm(t *testing.T) {
	if testing.Short() {
		t.Skip("git am of v16 and the 16 patches on a clone; run without -short")
	}
	dir := debianTree(t)
	ctx := context.Background()
	stack, err := seriestest.Generate(ctx, seriestest.Options{Tree: dir, Base: "v6.12", Stack: "x86-6.19"})
	if err != nil {
		t.Fatal(err)
	}
	pre, err := seriestest.Generate(ctx, seriestest.Options{Tree: dir, Base: "v6.12", Version: 16})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	work := filepath.Join(out, "linux")
	run(t, out, "git", "clone", "-q", "--shared", "--no-checkout", dir, work)
	run(t, work, "git", "sparse-checkout", "set", "--no-cone", "/kernel/", "/include/", "/arch/x86/", "/arch/Kconfig", "/MAINTAINERS", "/tools/include/uapi/")
	run(t, work, "git", "checkout", "-q", "-b", "stacked", "v6.12")
	for i, s := range []*series.Series{pre, stack} {
		files, err := series.WriteDir(filepath.Join(out, strings.Repeat("s", i+1)), seriestest.Messages(t, s))
		if err != nil {
			t.Fatal(err)
		}
		run(t, work, "git", append([]string{"am", "-q", "--empty=keep", "--whitespace=error-all"}, files[1:]...)...)
	}
	if n := strings.TrimSpace(run(t, work, "git", "rev-list", "--count", "v6.12..HEAD")); n != "26" {
		t.Errorf("git am applied %s commits, want 26", n)
	}
	if head := strings.TrimSpace(run(t, work, "git", "rev-parse", "HEAD^{tree}")); head != seriestest.TipTree(t, stack) {
		t.Errorf("git am tree %s, kpatch computed %s", head, seriestest.TipTree(t, stack))
	}
	// git records the authors and dates as committed.
	log := run(t, work, "git", "log", "--reverse", "--format=%an <%ae>|%aD|%s", "HEAD~16..HEAD")
	want := readCommits(t, sharedRevisions(t, "x86-6.19"))
	for i, l := range strings.Split(strings.TrimSpace(log), "\n") {
		f := strings.SplitN(l, "|", 3)
		if w := want[i]; len(f) != 3 || f[0] != w.author || f[2] != w.subject || !sameDate(f[1], w.date) {
			t.Errorf("commit %d: %q, committed %q|%q|%q", i+1, l, w.author, w.date, w.subject)
		}
	}
}

// sameDate compares git's %aD ("Wed, 5 Nov 2025 11:00:14 +0100") with a
// mail's Date.
func sameDate(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}
