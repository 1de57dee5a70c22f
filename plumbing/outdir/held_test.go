package outdir

import (
	"context"
	"path/filepath"
	"testing"
)

// TestHeld: a lock Lock holds is seen as held (flock locks of two open
// files conflict even in one process), a released or missing one is not,
// and asking does not take it.
func TestHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	if Held(path) {
		t.Fatal("a missing lock file is held")
	}
	unlock, err := Lock(context.Background(), path, nil, "the test tree")
	if err != nil {
		t.Fatal(err)
	}
	if !Held(path) {
		t.Error("the lock Lock holds is not seen as held")
	}
	unlock()
	if Held(path) {
		t.Error("a released lock is held")
	}
	unlock, err = Lock(context.Background(), path, nil, "the test tree")
	if err != nil {
		t.Fatalf("Held left the lock taken: %v", err)
	}
	unlock()
}
