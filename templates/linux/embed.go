// Package linux embeds the series description of the "deferred user-space
// unwinding" series (unwind_user: x86: Deferred unwinding infrastructure):
// the templates of the files it creates under files/, and one folder per
// revision (v11/, v12/, ...) with its cover letter, its order and the
// patches it declares first (each patch is declared once and guarded by
// revision).
//
// The format is documented in package spec. The templates carry the series'
// GPL-2.0 kernel code; every file they emit keeps its SPDX line.
package linux

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FS holds files/ and the revision directories.
//
//go:embed files facts v* *-v*
var FS embed.FS

// Export writes the series description into dir, which must not exist,
// atomically: it is written next to dir and renamed into place when
// complete. kpatch gen --spec dir then generates from the copy.
func Export(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s already exists: give a new directory", dir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".kpatch-spec-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyFS(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

func copyFS(tmp string) error {
	return fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(tmp, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := fs.ReadFile(FS, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// WriteDir writes files (slash-separated paths relative to dir) into dir,
// which must not exist, atomically as Export does.
func WriteDir(dir string, files map[string][]byte) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s already exists: give a new directory", dir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".kpatch-spec-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for p, b := range files {
		dst := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
