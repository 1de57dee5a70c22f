package rangediff_test

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/rangediff"
)

// authoredCommit is one commit of a test series with its author.
type authoredCommit struct {
	author string // "Name <address>" as given to git commit --author
	msg    string
	files  map[string]string
}

// buildMailed commits base (with mailmap as its .mailmap when not empty),
// then the two series on branches old and new, all in one git
// fast-import, and returns the patches as a mail reader sees them: the
// author is the mailbox of git format-patch's From: header, quotes and
// all.
func buildMailed(t *testing.T, base map[string]string, mailmap string, old, new []authoredCommit) (string, [2][]rangediff.Patch) {
	t.Helper()
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	if mailmap != "" {
		base[".mailmap"] = mailmap
	}
	var stream strings.Builder
	when := 1700000000
	commit := func(ref, author, msg string, files map[string]string, from string) {
		when++
		if author == "" {
			author = "t <t@example.com>"
		}
		fmt.Fprintf(&stream, "commit %s\nauthor %s %d +0000\ncommitter t <t@example.com> %d +0000\ndata %d\n%s\n", ref, author, when, when, len(msg), msg)
		if from != "" {
			fmt.Fprintf(&stream, "from %s\n", from)
		}
		names := make([]string, 0, len(files))
		for p := range files {
			names = append(names, p)
		}
		sort.Strings(names)
		for _, p := range names {
			if files[p] == "" {
				fmt.Fprintf(&stream, "D %s\n", p)
				continue
			}
			fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", p, len(files[p]), files[p])
		}
		stream.WriteString("\n")
	}
	commit("refs/heads/main", "", "base\n", base, "")
	for k, cs := range [][]authoredCommit{old, new} {
		ref := "refs/heads/" + []string{"old", "new"}[k]
		for n, c := range cs {
			from := ""
			if n == 0 {
				from = "refs/heads/main"
			}
			commit(ref, c.author, c.msg+"\n", c.files, from)
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Environ(dir), strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
	gittest.Run(t, dir, "checkout", "-q", "-f", "main")
	var series [2][]rangediff.Patch
	for k, name := range []string{"old", "new"} {
		series[k] = readSeries(t, dir, "main.."+name)
	}
	return dir, series
}

// readSeries reads the commits of rev as a mail reader sees them, with
// three git commands whatever their number: commit ids, messages, and
// git format-patch's mails for the From: header and the diff.
func readSeries(t *testing.T, dir, rev string) []rangediff.Patch {
	t.Helper()
	git := func(args ...string) string { return string(gittest.Run(t, dir, args...)) }
	ids := strings.Fields(git("rev-list", "--reverse", "--abbrev-commit", "--abbrev=12", rev))
	msgs := strings.Split(git("log", "--reverse", "--format=%B%x00", rev), "\x00\n")
	mails := strings.Split(git("format-patch", "--stdout", "--no-signature", "--no-stat", rev), "\nFrom ")
	if len(msgs) < len(ids) || len(mails) != len(ids) {
		t.Fatalf("%d commits, %d messages, %d mails", len(ids), len(msgs), len(mails))
	}
	var out []rangediff.Patch
	for i, id := range ids {
		from := ""
		for _, l := range strings.Split(mails[i], "\n") {
			if strings.HasPrefix(l, "From: ") {
				from = strings.TrimPrefix(l, "From: ")
				break
			}
		}
		diff := ""
		if k := strings.Index(mails[i], "\ndiff --git "); k >= 0 {
			diff = mails[i][k+1:]
		}
		out = append(out, rangediff.Patch{Commit: id, Author: from, Message: msgs[i], Diff: diff})
	}
	return out
}

func compareRangeDiff(t *testing.T, dir string, series [2][]rangediff.Patch, mailmap string) {
	t.Helper()
	want := string(gittest.Run(t, dir, "-c", "core.abbrev=12", "range-diff", "--no-color", "main..old", "main..new"))
	var mm *rangediff.Mailmap
	if mailmap != "" {
		mm = rangediff.ParseMailmap([]byte(mailmap))
	}
	got, err := rangediff.DiffContext(context.Background(), series[0], series[1], rangediff.Options{CreationFactor: rangediff.DefaultCreationFactor, Mailmap: mm})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("got:\n%s\nwant (git range-diff):\n%s", got, want)
	}
}

// TestAuthorsAsGit: authors whose names a mail header must quote (dots,
// quotes, backslashes, parentheses) appear in the range-diff as git
// range-diff shows them after git am, and the repository's .mailmap
// applies as git log applies it.
func TestAuthorsAsGit(t *testing.T) {
	gittest.Require(t)
	base := map[string]string{"a.c": lines(40, "a")}
	edit := func(at int, with string) map[string]string {
		ls := strings.SplitAfter(base["a.c"], "\n")
		ls[at] = with
		return map[string]string{"a.c": strings.Join(ls, "")}
	}
	authors := []string{
		"H. Peter Anvin <hpa@zytor.com>",
		"Paul E. McKenney <paulmck@kernel.org>",
		"Shawn O. Pearce <spearce@spearce.org>",
		`Nick "Q" Quote <q@example.com>`,
		`Back\slash <bs@example.com>`,
		"Paren (thesis) Name <p@example.com>",
		"Old Name <old@example.com>",
		"Someone <MixedCase@Example.com>",
		"Other Old <shared@example.com>",
		"Kept Name <shared@example.com>",
	}
	mailmap := "# canonical names\n" +
		"New Name <new@example.com> <old@example.com>\n" +
		"Mapped Case <mixedcase@example.com>\n" +
		"Proper Other <proper@example.com> other old <shared@example.com>\n" +
		"<pearce@example.org> <spearce@spearce.org>\n"
	for _, withMailmap := range []bool{false, true} {
		t.Run(fmt.Sprintf("mailmap=%v", withMailmap), func(t *testing.T) {
			var old, new []authoredCommit
			for i, a := range authors {
				old = append(old, authoredCommit{a, fmt.Sprintf("patch %d\n\nbody", i), edit(2+3*i, fmt.Sprintf("old %d\n", i))})
				new = append(new, authoredCommit{a, fmt.Sprintf("patch %d\n\nbody", i), edit(2+3*i, fmt.Sprintf("new %d\n", i))})
			}
			mm := ""
			if withMailmap {
				mm = mailmap
			}
			dir, series := buildMailed(t, map[string]string{"a.c": base["a.c"]}, mm, old, new)
			compareRangeDiff(t, dir, series, mm)
		})
	}
}

// TestTiesAsGit: patches with equal diffs (more of them than git's hash
// map holds before it grows) and patches equally far from two others are
// paired as git pairs them.
func TestTiesAsGit(t *testing.T) {
	gittest.Require(t)
	base := map[string]string{"a.c": lines(30, "a"), "b.c": lines(30, "b")}
	with := func(name string, add bool) map[string]string {
		if add {
			return map[string]string{name: base[name] + "extra\n"}
		}
		return map[string]string{name: base[name]}
	}
	for _, n := range []int{3, 8, 60, 140} {
		t.Run(fmt.Sprintf("equal diffs %d", n), func(t *testing.T) {
			var old, new []authoredCommit
			for i := 0; i < n; i++ {
				old = append(old, authoredCommit{"", fmt.Sprintf("old step %d", i), with("a.c", i%2 == 0)})
				new = append(new, authoredCommit{"", fmt.Sprintf("new step %d", i), with("a.c", i%2 == 0)})
			}
			dir, series := buildMailed(t, map[string]string{"a.c": base["a.c"]}, "", old, new)
			compareRangeDiff(t, dir, series, "")
		})
	}
	t.Run("equal total costs", func(t *testing.T) {
		// Found by comparing git's assignment with the Hungarian
		// algorithm kpatch used before: pairing old 4 with new 3, or
		// leaving both unpaired, cost the same; git pairs them.
		lines := make([]string, 12)
		for i := range lines {
			lines[i] = fmt.Sprintf("line %d\n", i)
		}
		series := func(steps [][2]any) []authoredCommit {
			cur := append([]string{}, lines...)
			var out []authoredCommit
			for _, s := range steps {
				cur[s[0].(int)] = s[1].(string)
				out = append(out, authoredCommit{"", "same", map[string]string{"f.c": strings.Join(cur, "")}})
			}
			return out
		}
		old := series([][2]any{{7, "z\n"}, {8, "x\n"}, {4, "z\n"}, {1, "x\n"}, {11, "z\n"}})
		new := series([][2]any{{6, "z\n"}, {3, "x\n"}, {1, "x\n"}})
		dir, s := buildMailed(t, map[string]string{"f.c": strings.Join(lines, "")}, "", old, new)
		compareRangeDiff(t, dir, s, "")
	})
	t.Run("equal costs", func(t *testing.T) {
		// Each old patch is as far from each new one.
		var old, new []authoredCommit
		for i := 0; i < 4; i++ {
			old = append(old, authoredCommit{"", "same subject\n\nsame body", with("a.c", i%2 == 0)})
			new = append(new, authoredCommit{"", "same subject\n\nsame body", with("b.c", i%2 == 0)})
		}
		dir, series := buildMailed(t, map[string]string{"a.c": base["a.c"], "b.c": base["b.c"]}, "", old, new)
		compareRangeDiff(t, dir, series, "")
	})
}
