package verify

import (
	"context"
	"errors"
	"kpatch/plumbing/outdir"
	"path/filepath"
	"testing"
	"time"
)

// TestBuildTreeLock: a tree kpatch test build is building in (its build
// lock, held) is not read: OpenBuildTree and BuildTrees
// say ErrBuilding. A tree verify reads holds a shared lock until Close, so
// a test build that starts meanwhile waits for verify instead of changing
// the headers and compile commands under it.
func TestBuildTreeLock(t *testing.T) {
	tree := fakeBuildTree(t)
	obj := tree.Obj
	tree.Close()
	lock := filepath.Join(obj, ".lock") // the tree's root: .lock beside .config, as test build takes it
	unlock, err := outdir.Lock(context.Background(), lock, nil, obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenBuildTree(obj); !errors.Is(err, ErrBuilding) {
		t.Errorf("a tree being built: %v, want ErrBuilding", err)
	}
	if _, _, err := BuildTrees(filepath.Dir(obj)); !errors.Is(err, ErrBuilding) {
		t.Errorf("a directory holding a tree being built: %v, want ErrBuilding", err)
	}
	unlock()

	tree, err = OpenBuildTree(obj)
	if err != nil {
		t.Fatal(err)
	}
	built := make(chan error, 1)
	go func() {
		unlock, err := outdir.Lock(context.Background(), lock, nil, obj) // a test build starting
		if err == nil {
			unlock()
		}
		built <- err
	}()
	select {
	case err := <-built:
		t.Fatalf("the build did not wait for verify's read: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	tree.Close()
	select {
	case err := <-built:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the build still waits after verify closed the tree")
	}
}
