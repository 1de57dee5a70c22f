package patchid_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/patchid"
)

// TestPatchIDDifferential compares PatchID with git patch-id --stable on
// random commits of real kernel files (bytes that are not UTF-8, form
// feeds, vertical tabs, carriage returns, renames, mode changes, new and
// deleted files, no final newline) and binary files (the tree's own, the
// files edits fill with their bytes, and every header git is told to
// treat as binary), every commit as git log -p prints it with and without
// --binary and --full-index, and as git format-patch writes it with and
// without --binary. -kpatch.cases=N sets the number of commits.
func TestPatchIDDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(*gittest.Seed, 11))
	commits := gittest.CasesOr(200, 2000)
	sources := gittest.KernelSources(t, r, 16)
	for p, b := range gittest.KernelBinaries(t) {
		sources[p] = b
	}
	h := gittest.Generate(t, r, sources, []string{"one"}, commits)
	// As t4204-patch-id.sh does: text files diffed as binary.
	if err := os.WriteFile(filepath.Join(h.Dir, ".git", "info", "attributes"), []byte("*.h binary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	binaries := 0
	for _, tc := range []struct {
		name string
		args []string
		// split cuts the output into commits: id, text.
		split *regexp.Regexp
	}{
		{"log -p", []string{"log", "-p", "--no-color"}, logCommit},
		{"log -p --binary", []string{"log", "-p", "--no-color", "--binary"}, logCommit},
		{"log -p --full-index", []string{"log", "-p", "--no-color", "--full-index"}, logCommit},
		{"format-patch", []string{"format-patch", "--stdout"}, mailCommit},
		{"format-patch --no-binary", []string{"format-patch", "--stdout", "--no-binary"}, mailCommit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := gittest.Run(t, h.Dir, append(tc.args, "main..one")...)
			binaries += bytes.Count(text, []byte("\nGIT binary patch\n")) + bytes.Count(text, []byte("\nBinary files "))
			cmd := exec.Command("git", "patch-id", "--stable")
			cmd.Dir, cmd.Env, cmd.Stdin = h.Dir, gittest.Environ(h.Dir), bytes.NewReader(text)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{} // commit -> patch id
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if f := strings.Fields(l); len(f) == 2 {
					want[f[1]] = f[0]
				}
			}
			starts := tc.split.FindAllSubmatchIndex(text, -1)
			compared := 0
			for i, m := range starts {
				end := len(text)
				if i+1 < len(starts) {
					end = starts[i+1][0]
				}
				id := string(text[m[2]:m[3]])
				w, ok := want[id]
				if !ok {
					continue // no diff (git prints no id), as for a commit that changed nothing
				}
				compared++
				if got := patchid.Stable(string(text[m[1]:end])); got != w {
					t.Errorf("seed %d, commit %s: patch-id %s, git's %s", *gittest.Seed, id, got, w)
				}
			}
			if compared < commits*9/10 {
				t.Errorf("only %d of %d commits compared", compared, commits)
			}
			t.Logf("%d patch ids compared with git patch-id --stable", compared)
		})
	}
	if binaries < commits/10 {
		t.Errorf("only %d binary diffs in %d commits", binaries, commits)
	}
	t.Logf("%d binary file diffs", binaries)
}

// The first line of a commit in git log and in git format-patch --stdout.
var (
	logCommit  = regexp.MustCompile(`(?m)^commit ([0-9a-f]{40})\n`)
	mailCommit = regexp.MustCompile(`(?m)^From ([0-9a-f]{40}) Mon Sep 17 00:00:00 2001\n`)
)
