package kerneltree

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestDebian612Concurrent asks for the tree from several goroutines at once
// in an empty cache: exactly one unpacks it, all get the same complete
// tree tagged v6.12, and no temporary directory is left behind.
func TestDebian612Concurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("unpacks the kernel sources (about a minute); run without -short")
	}
	if _, err := os.Stat(DebianTarball); err != nil {
		t.Fatal(ErrNoTarball)
	}
	cache := t.TempDir()
	t.Setenv("KPATCH_CACHE", cache)
	var wg sync.WaitGroup
	dirs := make([]string, 3)
	errs := make([]error, 3)
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = Debian612(context.Background(), io.Discard)
		}()
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil || dirs[i] != filepath.Join(cache, "linux-6.12") {
			t.Fatalf("call %d: %q, %v", i, dirs[i], errs[i])
		}
	}
	out, err := exec.Command("git", "-C", dirs[0], "rev-parse", "--verify", "v6.12^{commit}").CombinedOutput()
	if err != nil {
		t.Fatalf("no v6.12 tag: %v %s", err, out)
	}
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") || strings.Contains(e.Name(), "kpatch-create") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "kernel", "fork.c")); err != nil {
		t.Error(err)
	}
	// The files written and the commit are the same: git status, which
	// hashes what the index's stat data does not vouch for, sees no
	// difference (the index is there and up to date).
	status, err := exec.Command("git", "-C", dirs[0], "status", "--porcelain", "--ignored=no").CombinedOutput()
	if err != nil || len(status) > 0 {
		t.Errorf("git status in the tree (%v):\n%.2000s", err, status)
	}
	// The archive's symbolic links and executables keep their modes.
	modes, err := exec.Command("git", "-C", dirs[0], "ls-tree", "-r", "v6.12").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"100755 blob", "120000 blob"} {
		if !strings.Contains(string(modes), "\n"+m) {
			t.Errorf("no %s entry in the tree", m)
		}
	}
	// The objects are packed, and no gc runs behind the tree's back.
	count, err := exec.Command("git", "-C", dirs[0], "count-objects", "-v").CombinedOutput()
	if err != nil || !strings.Contains(string(count), "\ncount: 0\n") && !strings.HasPrefix(string(count), "count: 0\n") {
		t.Errorf("loose objects left (%v):\n%s", err, count)
	}
	for _, f := range []string{"gc.pid", "gc.log.lock", "gc.log"} {
		if _, err := os.Stat(filepath.Join(dirs[0], ".git", f)); err == nil {
			t.Errorf(".git/%s is there: a gc ran", f)
		}
	}
	if auto, err := exec.Command("git", "-C", dirs[0], "config", "gc.auto").Output(); err != nil || strings.TrimSpace(string(auto)) != "0" {
		t.Errorf("gc.auto is %q (%v), want 0", auto, err)
	}
}

func TestCheckTools(t *testing.T) {
	tests := []struct {
		have []string
		want string // "" for no error
	}{
		{[]string{"tar", "xz", "git"}, ""},
		{[]string{"tar", "git"}, "xz not found in PATH, needed to unpack " + DebianTarball + ": apt-get install xz-utils"},
		{nil, "tar, xz, git not found in PATH, needed to unpack " + DebianTarball + ": apt-get install tar xz-utils git"},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		for _, p := range tc.have {
			if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("PATH", dir)
		err := checkTools()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("with %v: %q, want %q", tc.have, got, tc.want)
		}
	}
}
