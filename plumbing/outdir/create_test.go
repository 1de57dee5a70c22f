package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreate(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "new")
	fill := func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "f"), []byte("x"), 0o644) }
	if err := Create(dir, fill); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(b) != "x" {
		t.Fatalf("content %q, %v", b, err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o755 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	if err := Create(dir, fill); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second Create: %v", err)
	}

	// A failing fill leaves nothing.
	failed := filepath.Join(parent, "failed")
	if err := Create(failed, func(string) error { return errors.New("disk full") }); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failing fill: %v", err)
	}
	if _, err := os.Lstat(failed); err == nil {
		t.Error("the directory exists after a failed fill")
	}

	// A directory made by someone else between the check and the rename
	// (even an empty one, which rename(2) would replace) is kept.
	raced := filepath.Join(parent, "raced")
	undo := setHooks(func(name string) error {
		if name == "create" {
			return os.Mkdir(raced, 0o700)
		}
		return nil
	}, false)
	err := Create(raced, fill)
	undo()
	if !errors.Is(err, ErrExists) {
		t.Errorf("raced Create: %v", err)
	}
	if ents, _ := os.ReadDir(raced); len(ents) != 0 {
		t.Errorf("the directory made meanwhile was replaced: %v", ents)
	}

	// What a killed run left beside the directory is removed by the next.
	stale := filepath.Join(parent, ".later.kpatch-create-123")
	os.Mkdir(stale, 0o700)
	if err := Create(filepath.Join(parent, "later"), fill); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		if strings.Contains(e.Name(), "kpatch-create") {
			t.Errorf("left %s", e.Name())
		}
	}
}
