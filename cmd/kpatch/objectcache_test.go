package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestGenLeavesCacheObjectsAlone: gen reads a tree's objects from the
// repository alone. Run with an empty cache it creates no objects/ there
// (nothing at all); run with a cache whose objects/ holds a FIFO where
// MAINTAINERS' blob would be kept and a truncated copy of kernel/fork.c's,
// it finishes and writes what it wrote from the empty cache (a reader of
// that directory would hang on the FIFO, or die of SIGBUS or write the
// truncated file).
func TestGenLeavesCacheObjectsAlone(t *testing.T) {
	tree := fakeGitKernel(t, true)
	gen := func(cache string) map[string]string {
		t.Helper()
		t.Setenv("KPATCH_CACHE", cache)
		t.Setenv("XDG_CACHE_HOME", cache)
		out := filepath.Join(t.TempDir(), "outgoing")
		var stdout, stderr bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- run([]string{"gen", "-v", "16", "--tree", tree, "--base", "v6.12", "-o", out}, &stdout, &stderr)
		}()
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("gen with cache %s: exit %d: %s", cache, code, stderr.String())
			}
		case <-time.After(time.Minute):
			t.Fatalf("gen with cache %s has not finished in a minute", cache)
		}
		return readTree(t, out)
	}

	empty := t.TempDir()
	want := gen(empty)
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("gen created %v in the cache", ents)
	}

	trapped := t.TempDir()
	keep := func(id string) string {
		p := filepath.Join(trapped, "objects", id[:2], id[2:])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := syscall.Mkfifo(keep(gitOut(t, tree, "rev-parse", "v6.12:MAINTAINERS")), 0o644); err != nil {
		t.Fatal(err)
	}
	fork := gitOut(t, tree, "cat-file", "blob", "v6.12:kernel/fork.c")
	truncated := append([]byte("blob "+strconv.Itoa(len(fork))+"\x00"), fork[:len(fork)/2]...)
	if err := os.WriteFile(keep(gitOut(t, tree, "rev-parse", "v6.12:kernel/fork.c")), truncated, 0o644); err != nil {
		t.Fatal(err)
	}
	got := gen(trapped)
	if len(got) != len(want) {
		t.Fatalf("%d files with objects/ in the cache, %d without", len(got), len(want))
	}
	for name, content := range want {
		if got[name] != content {
			t.Errorf("%s differs with objects/ in the cache", name)
		}
	}
}
