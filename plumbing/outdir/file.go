package outdir

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFile replaces the file at path, all at once: write writes the new
// content into a temporary file beside it (beside the file a symbolic link
// points to, so the link stays), which is renamed over it once complete.
// An existing file keeps its mode; a new one gets 0644. A failure or a
// killed run leaves the file as it was.
func WriteFile(path string, write func(w io.Writer) error) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+tmpMark+"-*")
	if err != nil {
		return err
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
