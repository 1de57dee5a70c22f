package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrExists is returned by Create for a directory that already exists.
var ErrExists = errors.New("already exists")

// Create makes the new directory dir, all at once: fill writes its
// content into a temporary directory beside it (.DIR.kpatch-create-XXXX),
// which is renamed to dir once fill has succeeded. dir must not exist; a
// failure (or a killed run) leaves no dir, and the next Create beside it
// removes what a killed one left. Concurrent runs are serialized by an
// flock on the parent directory, and the rename never replaces a
// directory created meanwhile by something else. Missing parents are
// created. This is the writer of kpatch spec -o, kpatch series import -o
// and kpatch revision new; kpatch gen -o, which replaces a directory,
// uses Write.
func Create(dir string, fill func(tmp string) error) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(abs); err == nil {
		return fmt.Errorf("%s %w: give a new directory", dir, ErrExists)
	}
	parent, base := filepath.Dir(abs), filepath.Base(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	unlock, err := lockDir(parent)
	if err != nil {
		return fmt.Errorf("locking %s: %w", parent, err)
	}
	defer unlock()
	prefix := tempPrefix(base, "create")
	if ents, err := os.ReadDir(parent); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), prefix) {
				os.RemoveAll(filepath.Join(parent, e.Name()))
			}
		}
	}
	if _, err := os.Lstat(abs); err == nil { // made while we waited for the lock
		return fmt.Errorf("%s %w: give a new directory", dir, ErrExists)
	}
	tmp, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := fill(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's is 0700
		return err
	}
	if err := step("create"); err != nil {
		return err
	}
	err = renameNoReplace(tmp, abs)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s %w: give a new directory", dir, ErrExists)
	}
	if err != nil {
		return err
	}
	done = true
	return nil
}
