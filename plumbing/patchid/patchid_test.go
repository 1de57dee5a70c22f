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
// commits that change, create and delete files, with several hunks, and
// binary files (hashed by their header and the two ids of their index
// line), each commit as git show, git show --binary, git show
// --full-index and git format-patch with and without --binary print it.
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
		// A binary file followed by a text file: the text file's change
		// is part of the id.
		{"binary file and text", func() {
			write("logo.bin", "GIF89a\x00\x01\x02\n\x00tail\n")
			write("z.c", "int z;\n")
		}},
		{"binary file, other text", func() {
			write("logo.bin", "GIF89a\x00\x01\x03\n\x00tail\n")
			write("z.c", "int zz;\n")
		}},
		{"binary file deleted, text changed", func() {
			os.Remove(filepath.Join(dir, "logo.bin"))
			write("z.c", "int zzz;\n")
		}},
		{"binary file among text files", func() {
			write("a.c", long.String()+"one more\n")
			write("b.bin", strings.Repeat("\x00\xff\n", 300))
			write("z.c", "int z4;\n")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.edit()
			git("add", "-A")
			git("commit", "-q", "-m", tc.name)
			for _, args := range [][]string{
				{"show", "--format="}, {"show", "--format=", "--binary"}, {"show", "--format=", "--full-index"},
				{"format-patch", "--stdout", "-1"}, {"format-patch", "--stdout", "-1", "--binary"},
				{"format-patch", "--stdout", "-1", "--no-binary"},
			} {
				show := git(append(args, "HEAD")...)
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
					t.Errorf("git %s: patch-id %s, git's %s", strings.Join(args, " "), got, want[0])
				}
			}
		})
	}
}
