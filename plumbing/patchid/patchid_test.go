package patchid_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/patchid"
)

// TestPatchIDMatchesGit compares PatchID with git patch-id --stable on
// commits that change, create and delete files, with several hunks.
func TestPatchIDMatchesGit(t *testing.T) {
	gittest.Require(t)
	dir := t.TempDir()
	git := func(args ...string) string { return string(gittest.Run(t, dir, args...)) }
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var long strings.Builder
	for i := 0; i < 60; i++ {
		long.WriteString("line " + strings.Repeat("y", i%5) + "\n")
	}
	git("init", "-q")
	write("a.c", long.String())
	write("gone.c", "x\n")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	tests := []struct {
		name string
		edit func()
	}{
		{"two hunks", func() {
			write("a.c", strings.Replace(strings.Replace(long.String(), "line yy\n", "line  changed\t\n", 1), "line yyyy\n", "", 3))
		}},
		{"create and delete", func() {
			write("new.c", "int x;\n\tint y;\n")
			os.Remove(filepath.Join(dir, "gone.c"))
		}},
		{"no newline at end", func() { write("a.c", long.String()+"tail") }},
		// git hashes bytes: a byte that is not UTF-8 is not U+FFFD.
		{"latin-1 byte", func() { write("l1.c", "caf\351\n") }},
		{"latin-1 byte replaced", func() { write("l1.c", "cafe\n") }},
		// git's isspace is " \t\n\r": it keeps form feeds and vertical tabs.
		{"form feed and vertical tab", func() { write("ff.c", "a\f\n\vb\n\f\n") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.edit()
			git("add", "-A")
			git("commit", "-q", "-m", tc.name)
			show := git("show", "--format=", "HEAD")
			cmd := exec.Command("git", "patch-id", "--stable")
			cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Environ(dir), strings.NewReader(show)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Fields(string(out))
			if len(want) == 0 {
				t.Fatalf("git patch-id printed nothing for:\n%s", show)
			}
			if got := patchid.Stable(show); got != want[0] {
				t.Errorf("patch-id %s, git's %s", got, want[0])
			}
		})
	}
}
