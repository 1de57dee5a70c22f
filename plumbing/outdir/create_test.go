package outdir

import (
	"errors"
	"io"
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

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink("f", link)
	if err := WriteFile(link, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	err := WriteFile(path, func(w io.Writer) error { io.WriteString(w, "half"); return errors.New("disk full") })
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failing write: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("after a failed write: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left %d entries", len(ents))
	}
}
