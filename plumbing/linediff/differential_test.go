package linediff

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

// gitCommitDiffs returns, for every commit of rev, the hunks git log -p
// prints for each file (the text after its "+++" line), by path; files
// git shows as binary or without hunks are absent.
func gitCommitDiffs(t *testing.T, dir, rev string) map[string]map[string]string {
	t.Helper()
	out := gittest.Run(t, dir, "log", "-p", "--no-renames", "--no-color", "--format=%x01%H", rev)
	byCommit := map[string]map[string]string{}
	for _, chunk := range bytes.Split(out, []byte("\x01"))[1:] {
		id, rest, _ := bytes.Cut(chunk, []byte("\n"))
		files := map[string]string{}
		byCommit[string(id)] = files
		parts := bytes.Split(rest, []byte("\ndiff --git a/"))
		for k, fd := range parts {
			if k < len(parts)-1 {
				fd = append(fd, '\n') // the split took it
			}
			head, body, ok := bytes.Cut(fd, []byte("\n+++ "))
			if !ok {
				continue
			}
			first, _, _ := bytes.Cut(head, []byte("\n"))
			name := strings.TrimPrefix(string(first), "diff --git a/")
			name = name[:strings.Index(name, " b/")]
			_, hunks, _ := bytes.Cut(body, []byte("\n"))
			files[name] = string(hunks)
		}
	}
	return byCommit
}

// TestDifferential compares UnifiedWith (with the kernel's hunk-header
// drivers) with git log -p on random edits of real kernel files: lines
// inserted, deleted and replaced with lines of other files and with
// bytes that are not UTF-8, form feeds, vertical tabs and carriage
// returns; files created, deleted, renamed, without a final newline.
// -kpatch.cases=N sets the number of commits, -kpatch.seed the seed.
func TestDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(*gittest.Seed, 7))
	commits := gittest.CasesOr(120, 1000)
	h := gittest.Generate(t, r, gittest.KernelSources(t, r, 24), []string{"one", "two"}, commits/2)
	compared := 0
	for _, b := range []string{"one", "two"} {
		diffs := gitCommitDiffs(t, h.Dir, "main.."+b)
		prev := h.Base.Files
		for i, c := range h.Branches[b] {
			git := diffs[c.ID]
			for path, f := range c.Files {
				old := prev[path]
				if bytes.Equal(old.Content, f.Content) || IsBinary(old.Content) || IsBinary(f.Content) {
					continue
				}
				compared++
				got, _, _ := UnifiedWith(old.Content, f.Content, KernelOptions(path))
				if got != git[path] {
					t.Errorf("seed %d, %s commit %d, %s:\n%s", *gittest.Seed, b, i, path, sideBySide(git[path], got))
				}
			}
			for path, old := range prev {
				if _, ok := c.Files[path]; ok || IsBinary(old.Content) || len(old.Content) == 0 {
					continue
				}
				compared++
				got, _, _ := UnifiedWith(old.Content, nil, KernelOptions(path))
				if got != git[path] {
					t.Errorf("seed %d, %s commit %d, %s deleted:\n%s", *gittest.Seed, b, i, path, sideBySide(git[path], got))
				}
			}
			prev = c.Files
		}
	}
	if compared < commits {
		t.Errorf("only %d file diffs compared for %d commits", compared, commits)
	}
	t.Logf("%d file diffs of %d commits compared with git", compared, commits)
}
