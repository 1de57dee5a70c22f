package cunit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepOverlays: the overlay directory of a run whose process is gone
// (stopped by Ctrl-C) is removed by the next run; a live process's stays.
func TestSweepOverlays(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", overlayPrefix, dead.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(gone)
	live, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", overlayPrefix, os.Getppid()))
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(live)
	// a name without the process ID (os.MkdirTemp's digits only) is not
	// taken for one
	other, err := os.MkdirTemp("", overlayPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(other)
	sweepOverlays()
	if _, err := os.Stat(other); err != nil {
		t.Errorf("%s without a process ID is removed: %v", other, err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("%s of an ended process is left: %v", gone, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s of a live process is removed: %v", live, err)
	}
}

// TestPruneCache: a kept unit no run has read for cacheAge goes; one read
// since stays; the cache is walked at most once every pruneEvery.
func TestPruneCache(t *testing.T) {
	dir := t.TempDir()
	stale, fresh := filepath.Join(dir, "ab", "stale.gob"), filepath.Join(dir, "cd", "fresh.gob")
	for _, p := range []string{stale, fresh} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	old := time.Now().Add(-cacheAge - time.Hour)
	os.Chtimes(stale, old, old)
	pruneCache(dir)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s stays: %v", stale, err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("%s removed: %v", fresh, err)
	}
	os.Chtimes(fresh, old, old)
	pruneCache(dir) // within pruneEvery of the last: not walked
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("%s removed by a prune within a day of the last: %v", fresh, err)
	}
	long := time.Now().Add(-pruneEvery - time.Hour)
	os.Chtimes(filepath.Join(dir, ".pruned"), long, long)
	pruneCache(dir)
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("%s stays a day after the last prune: %v", fresh, err)
	}
}
