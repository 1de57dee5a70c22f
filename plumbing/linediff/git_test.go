package linediff

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"kpatch/internal/gittest"
)

// gitCase is one old/new pair to be diffed by a real git.
type gitCase struct {
	name     string // file name inside the scratch repository
	old, new []byte
}

// gitHunks lets git diff every case in one scratch repository (old
// versions committed, new versions staged) and returns, per case, the
// text git prints after the "+++ b/..." line. attributes, if not empty,
// becomes the work tree's .gitattributes, which git reads as it diffs.
// A test that asks again about the same cases (the same slice) with other
// attributes or options reuses the repository.
func gitHunks(t testing.TB, cases []gitCase, attributes string, extraArgs ...string) []string {
	t.Helper()
	dir := scratchRepo(t, cases)
	attrs := filepath.Join(dir, ".gitattributes")
	if attributes != "" {
		if err := os.WriteFile(attrs, []byte(attributes), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if err := os.Remove(attrs); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	args := append([]string{"diff", "--cached", "--no-color", "--no-renames", "--no-ext-diff"}, extraArgs...)
	out := runGit(t, dir, args...)

	byName := map[string]string{}
	var cur string
	var buf strings.Builder
	inHunks := false
	flush := func() {
		if cur != "" {
			byName[cur] = buf.String()
		}
		buf.Reset()
	}
	for len(out) > 0 {
		i := bytes.IndexByte(out, '\n')
		var line []byte
		if i < 0 {
			line, out = out, nil
		} else {
			line, out = out[:i+1], out[i+1:]
		}
		if bytes.HasPrefix(line, []byte("diff --git a/")) {
			flush()
			rest := strings.TrimSuffix(string(line[len("diff --git a/"):]), "\n")
			j := strings.Index(rest, " b/")
			if j < 0 {
				t.Fatalf("cannot parse %q", line)
			}
			cur = rest[:j]
			inHunks = false
			continue
		}
		if !inHunks {
			if bytes.HasPrefix(line, []byte("+++ ")) {
				inHunks = true
			}
			if bytes.HasPrefix(line, []byte("Binary files ")) {
				t.Fatalf("git considers %s binary", cur)
			}
			continue
		}
		buf.Write(line)
	}
	flush()
	res := make([]string, len(cases))
	for i, c := range cases {
		res[i] = byName[c.name]
	}
	return res
}

type scratchKey struct {
	t     testing.TB
	first *gitCase
	n     int
}

// scratchRepos are the repositories of gitHunks, by test and cases.
var scratchRepos sync.Map

// scratchRepo returns a repository in which the old versions of cases are
// committed and the new ones staged (and no .gitattributes tracked), made
// once per test and slice of cases.
func scratchRepo(t testing.TB, cases []gitCase) string {
	t.Helper()
	key := scratchKey{t: t, n: len(cases)}
	if len(cases) > 0 {
		key.first = &cases[0]
	}
	if dir, ok := scratchRepos.Load(key); ok {
		return dir.(string)
	}
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", ".")
	write := func(old bool) {
		for _, c := range cases {
			data := c.new
			if old {
				data = c.old
			}
			p := filepath.Join(dir, c.name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(true)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "old")
	write(false)
	runGit(t, dir, "add", "-A")
	scratchRepos.Store(key, dir)
	t.Cleanup(func() { scratchRepos.Delete(key) })
	return dir
}

// compareWithGit diffs all cases with git and with UnifiedWith and
// reports every mismatch. funcName picks the hunk-header rule per case
// name; attributes is handed to gitHunks. It returns the number of cases
// compared.
func compareWithGit(t *testing.T, cases []gitCase, attributes string, opt Options, funcName func(name string) FuncNameFunc, extraArgs ...string) int {
	t.Helper()
	want := gitHunks(t, cases, attributes, extraArgs...)
	failures := 0
	for i, c := range cases {
		o := opt
		if funcName != nil {
			o.FuncName = funcName(c.name)
		}
		got, added, deleted := UnifiedWith(c.old, c.new, o)
		if got != want[i] {
			failures++
			if failures <= 5 {
				t.Errorf("case %s differs from git:\n%s", c.name, sideBySide(want[i], got))
				dumpCase(t, c, want[i], got)
			}
			continue
		}
		wa, wd := countLines(want[i])
		if wa != added || wd != deleted {
			t.Errorf("case %s: counts +%d -%d, hunks say +%d -%d", c.name, added, deleted, wa, wd)
		}
	}
	if failures > 5 {
		t.Errorf("%d of %d cases differ from git", failures, len(cases))
	}
	return len(cases)
}

// countLines counts the added and deleted lines of a hunk text.
func countLines(hunks string) (added, deleted int) {
	for _, l := range strings.SplitAfter(hunks, "\n") {
		if strings.HasPrefix(l, "+") {
			added++
		} else if strings.HasPrefix(l, "-") {
			deleted++
		}
	}
	return added, deleted
}

// dumpCase saves a failing case for inspection when
// LINEDIFF_DUMP=<dir> is set.
func dumpCase(t *testing.T, c gitCase, want, got string) {
	dir := os.Getenv("LINEDIFF_DUMP")
	if dir == "" {
		return
	}
	base := filepath.Join(dir, strings.ReplaceAll(c.name, "/", "_"))
	os.MkdirAll(dir, 0o755)
	os.WriteFile(base+".old", c.old, 0o644)
	os.WriteFile(base+".new", c.new, 0o644)
	os.WriteFile(base+".git", []byte(want), 0o644)
	os.WriteFile(base+".got", []byte(got), 0o644)
	t.Logf("dumped %s.*", base)
}

// sideBySide renders the first differing line of two texts with some
// surrounding lines.
func sideBySide(want, got string) string {
	wl := strings.SplitAfter(want, "\n")
	gl := strings.SplitAfter(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	from := max(i-3, 0)
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d\n--- git\n", i+1)
	for j := from; j < min(len(wl), i+6); j++ {
		fmt.Fprintf(&b, "  %q\n", wl[j])
	}
	b.WriteString("--- linediff\n")
	for j := from; j < min(len(gl), i+6); j++ {
		fmt.Fprintf(&b, "  %q\n", gl[j])
	}
	return b.String()
}

func requireGit(t testing.TB) { gittest.Require(t) }

func runGit(t testing.TB, dir string, args ...string) []byte {
	t.Helper()
	return gittest.Run(t, dir, args...)
}
