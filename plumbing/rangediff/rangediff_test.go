package rangediff_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/rangediff"
)

// commit is one commit of a test series: a message and files to write
// ("" deletes the file).
type commit struct {
	msg   string
	files map[string]string
}

func lines(n int, word string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(word + " " + strings.Repeat("x", i%7) + "\n")
	}
	return b.String()
}

// build commits base, then the old series on branch old and the new one on
// branch new, and returns the patches of each as rangediff reads them.
func build(t *testing.T, base map[string]string, old, new []commit) (string, []rangediff.Patch, []rangediff.Patch) {
	dir := t.TempDir()
	git := func(args ...string) string { return string(gittest.Run(t, dir, args...)) }
	git("init", "-q", "-b", "main")
	write := func(files map[string]string) {
		for p, c := range files {
			full := filepath.Join(dir, p)
			if c == "" {
				os.Remove(full)
				continue
			}
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "-A")
	}
	write(base)
	git("commit", "-q", "-m", "base")
	var series [2][]rangediff.Patch
	for k, cs := range [][]commit{old, new} {
		git("checkout", "-q", "-B", []string{"old", "new"}[k], "main")
		for _, c := range cs {
			write(c.files)
			git("commit", "-q", "-m", c.msg)
			series[k] = append(series[k], rangediff.Patch{
				Commit:  strings.TrimSpace(git("rev-parse", "--short=12", "HEAD")),
				Author:  strings.TrimSpace(git("log", "-1", "--format=%an <%ae>")),
				Message: git("log", "-1", "--format=%B"),
				Diff:    git("diff-tree", "-p", "--no-commit-id", "HEAD"),
			})
		}
	}
	return dir, series[0], series[1]
}

func TestDiffMatchesGit(t *testing.T) {
	gittest.Require(t)
	base := map[string]string{"a.c": lines(40, "a"), "b.c": lines(30, "b"), "old.txt": lines(5, "o")}
	edit := func(s string, at int, with string) string {
		ls := strings.SplitAfter(s, "\n")
		ls[at] = with
		return strings.Join(ls, "")
	}
	tests := []struct {
		name     string
		old, new []commit
	}{
		{
			name: "identical",
			old:  []commit{{"one\n\nbody", map[string]string{"a.c": edit(base["a.c"], 3, "changed\n")}}},
			new:  []commit{{"one\n\nbody", map[string]string{"a.c": edit(base["a.c"], 3, "changed\n")}}},
		},
		{
			name: "changed code and message",
			old:  []commit{{"one\n\nbody", map[string]string{"a.c": edit(base["a.c"], 3, "changed\n")}}},
			new:  []commit{{"one\n\nbody, reworded", map[string]string{"a.c": edit(base["a.c"], 3, "changed again\n")}}},
		},
		{
			name: "dropped, added, new and deleted files",
			old: []commit{
				{"first\n\nkept", map[string]string{"a.c": edit(base["a.c"], 10, "first\n")}},
				{"second\n\ndropped", map[string]string{"b.c": edit(base["b.c"], 5, "second\n"), "old.txt": ""}},
				{"third\n\nkept too", map[string]string{"new.c": lines(12, "n")}},
			},
			new: []commit{
				{"first\n\nkept", map[string]string{"a.c": edit(base["a.c"], 10, "first\n")}},
				{"inserted\n\nwith a body\nof two lines", map[string]string{"a.c": edit(edit(base["a.c"], 10, "first\n"), 30, "inserted\n")}},
				{"third\n\nkept too", map[string]string{"new.c": edit(lines(12, "n"), 2, "n changed\n")}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, old, new := build(t, base, tc.old, tc.new)
			want := string(gittest.Run(t, dir, "-c", "core.abbrev=12", "range-diff", "--no-color", "main..old", "main..new"))
			got := rangediff.Diff(old, new, rangediff.DefaultCreationFactor)
			if got != want {
				t.Errorf("got:\n%s\nwant (git range-diff):\n%s", got, want)
			}
		})
	}
}
