package series

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCheckBranchName compares CheckBranchName with git check-ref-format
// --branch on names that break each of git's rules, and on names that are
// valid although they look odd. git is required (as for every test that
// records a branch).
func TestCheckBranchName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
		why  string // part of the error for a refused name
	}{
		{"unwind-v11", true, ""},
		{"topic/unwind-v11", true, ""},
		{"a.b", true, ""},
		{"a/b.c/d", true, ""},
		{"@", true, ""},
		{"a@b", true, ""},
		{"refs/heads/x", true, ""},
		{"é", true, ""},
		{"x-", true, ""},
		{"a.locked", true, ""},
		{"", false, "empty"},
		{"HEAD", false, "HEAD"},
		{"-x", false, "starts with -"},
		{"-", false, "starts with -"},
		{"a..b", false, `".."`},
		{"..", false, `".."`},
		{".", false, "ends with ."},
		{"a.", false, "ends with ."},
		{"a/b.", false, "ends with ."},
		{"a b.lock", false, `' '`},
		{"a b", false, `' '`},
		{"x:y", false, `':'`},
		{"x~1", false, `'~'`},
		{"x^", false, `'^'`},
		{"a?b", false, `'?'`},
		{"a*b", false, `'*'`},
		{"a[b", false, `'['`},
		{`a\b`, false, `'\\'`},
		{"a\tb", false, "control character U+0009"},
		{"a\x7fb", false, "control character U+007F"},
		{"a\x01", false, "control character U+0001"},
		{"a@{b", false, `"@{"`},
		{"@{-1}", false, `"@{"`},
		{"a.lock", false, `"a.lock" ends with .lock`},
		{"a.lock/b", false, `"a.lock" ends with .lock`},
		{"a/.b", false, `".b" starts with .`},
		{".a", false, `".a" starts with .`},
		{"a/./b", false, `"." starts with .`},
		{"/a", false, "empty component"},
		{"a/", false, "empty component"},
		{"a//b", false, "empty component"},
		{"/", false, "empty component"},
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed to compare with git check-ref-format: %v", err)
	}
	outside := t.TempDir() // not a repository: @{-N} cannot be expanded
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckBranchName(tt.name)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckBranchName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrBadBranchName) || !strings.Contains(err.Error(), tt.why) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q: want one line naming %s", err, tt.why)
				}
			}
			cmd := exec.Command(git, "check-ref-format", "--branch", tt.name)
			cmd.Dir = outside
			cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+outside)
			gitOK := cmd.Run() == nil
			if gitOK != tt.ok {
				t.Errorf("git check-ref-format --branch %q: ok=%v, the table says %v", tt.name, gitOK, tt.ok)
			}
		})
	}
}
