package kernelsrc

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

func debianTree(t *testing.T) string {
	t.Helper()
	return testenv.KernelTree(t)
}

func TestOpen(t *testing.T) {
	tree := debianTree(t)
	bare := filepath.Join(t.TempDir(), "linux.git")
	if out, err := exec.Command("git", "clone", "-q", "--bare", "--shared", tree, bare).CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare: %v %s", err, out)
	}
	clone := filepath.Join(t.TempDir(), "linux")
	worktree := filepath.Join(t.TempDir(), "wt")
	for _, args := range [][]string{
		{"clone", "-q", "--shared", "--no-checkout", tree, clone},
		{"-C", clone, "worktree", "add", "-q", "--no-checkout", worktree, "v6.12"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", tree, "rev-parse", "--short=12", "v6.12^{commit}").Output()
	if err != nil {
		t.Fatal(err)
	}
	short := strings.TrimSpace(string(out))
	notKernel := t.TempDir()
	os.WriteFile(filepath.Join(notKernel, "Makefile"), []byte("all:\n"), 0o644)
	tests := []struct {
		name    string
		dir     string
		base    string
		plain   bool
		wantErr error
		wantGit bool
	}{
		{"git repository at a tag", tree, "v6.12", false, nil, true},
		{"git repository at a branch", tree, "master", false, nil, true},
		{"git repository at a commit", tree, "HEAD", false, nil, true},
		{"unknown revision", tree, "v9.99", false, ErrUnknownRev, false},
		{"a short commit id", tree, short, false, nil, true},
		{"a short commit id through alternates", clone, short, false, nil, true},
		{"a short commit id through alternates of a worktree", worktree, short, false, nil, true},
		{"a tree is not a commit", clone, "v6.12^{tree}", false, ErrUnknownRev, false},
		{"a path is not a commit", clone, "v6.12:no/such", false, ErrUnknownRev, false},
		{"the same tree as a plain directory", tree, "label", true, nil, false},
		{"a bare clone with alternates", bare, "v6.12", false, nil, true},
		{"a worktree of a shared clone", worktree, "v6.12", false, nil, true},
		{"not a kernel tree", notKernel, "v1", false, ErrNotKernel, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Open(tt.dir, tt.base, tt.plain)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tr.IsGit() != tt.wantGit || (tr.IsGit() && tr.Commit.IsZero()) {
				t.Errorf("IsGit %v, commit %s", tr.IsGit(), tr.Commit)
			}
			mk, err := tr.ReadFile("Makefile")
			if err != nil || !strings.HasPrefix(string(mk), "# SPDX-License-Identifier: GPL-2.0") {
				t.Errorf("Makefile: %v %.40q", err, mk)
			}
			if !tr.Exists("kernel/fork.c") || tr.Exists("kernel/unwind/user.c") {
				t.Error("Exists is wrong")
			}
			if !tr.IsDir("kernel") || tr.IsDir("kernel/fork.c") || tr.IsDir("no/such") {
				t.Error("IsDir is wrong")
			}
			if _, err := tr.ReadFile("kernel/unwind/user.c"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
			}
		})
	}
}
