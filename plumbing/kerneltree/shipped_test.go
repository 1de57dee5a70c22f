package kerneltree

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLookupShipped: every known name resolves to itself, an unknown one
// is ErrUnknownShipped and lists the known ones.
func TestLookupShipped(t *testing.T) {
	for _, n := range ShippedNames() {
		s, err := LookupShipped(n)
		if err != nil || s.Name != n || !strings.HasPrefix(s.Tarball, "/usr/src/"+s.Package) {
			t.Errorf("%s: %+v, %v", n, s, err)
		}
	}
	_, err := LookupShipped("debian-9.9")
	if !errors.Is(err, ErrUnknownShipped) || !strings.Contains(err.Error(), "debian-7.3") {
		t.Errorf("unknown name: %v", err)
	}
}

// TestShippedMissingTarball: without the package, Tree names the set-up
// command and unpacks nothing.
func TestShippedMissingTarball(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("KPATCH_CACHE", cache)
	s := ShippedKernels["debian-7.3"]
	s.Tarball = filepath.Join(t.TempDir(), "none.tar.xz")
	_, err := s.Tree(context.Background(), io.Discard)
	var me *MissingTarballError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "scripts/setup.sh --linux-source 7.3") {
		t.Fatalf("got %v", err)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("cache not empty: %v", ents)
	}
}

// TestShippedTree makes the 7.3 tree in the cache (KPATCH_CACHE, shared
// with kpatch test qemu --kernel debian-7.3) and checks its tag and the
// perf ABI the boot test relies on.
func TestShippedTree(t *testing.T) {
	if testing.Short() {
		t.Skip("unpacks linux-source-7.3 (about two minutes); run without -short")
	}
	s := ShippedKernels["debian-7.3"]
	if _, err := os.Stat(s.Tarball); err != nil {
		t.Skipf("%v", &MissingTarballError{Kernel: s})
	}
	dir, err := s.Tree(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", dir, "show", "v7.3:include/uapi/linux/perf_event.h").Output()
	if err != nil {
		t.Fatalf("no v7.3 tag or header: %v", err)
	}
	for _, want := range []string{"defer_callchain:  1", "PERF_RECORD_CALLCHAIN_DEFERRED\t\t= 22", "PERF_CONTEXT_USER_DEFERRED\t\t= (__u64)-640"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("perf_event.h of v7.3 lacks %q", want)
		}
	}
}
