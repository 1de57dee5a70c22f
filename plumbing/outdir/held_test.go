package outdir

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadLock: a reader gets the shared lock of a free or missing lock
// file, not while Lock holds it (flock locks of two open files conflict
// even in one process), and Lock waits while a reader holds it, saying so,
// until the reader is done.
func TestReadLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	release, ok := ReadLock(path)
	if !ok {
		t.Fatal("a missing lock file is held")
	}
	release()
	unlock, err := Lock(context.Background(), path, nil, "the test tree")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ReadLock(path); ok {
		t.Error("a reader got the lock Lock holds")
	}
	unlock()
	release, ok = ReadLock(path)
	if !ok {
		t.Fatal("a released lock is held")
	}
	other, ok := ReadLock(path)
	if !ok {
		t.Fatal("two readers exclude each other")
	}
	other()
	var said bytes.Buffer
	got := make(chan error, 1)
	go func() {
		unlock, err := Lock(context.Background(), path, &said, "the test tree")
		if err == nil {
			unlock()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Lock did not wait for the reader: %v", err)
	case <-time.After(3 * lockPoll):
	}
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(said.String(), "waiting for another kpatch run") {
		t.Errorf("Lock waited without saying so: %q", said.String())
	}
}
