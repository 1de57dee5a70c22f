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
	"io/fs"
	"os"
	"path/filepath"

	"kpatch/plumbing/outdir"
)

// FS holds files/, the revision directories and verify-rules (what kpatch
// verify checks for this series beyond the kernel's rules).
//
//go:embed files facts v* *-v* verify-rules
var FS embed.FS

// Export writes the series description into dir, which must not exist,
// atomically (package outdir's Create: written beside dir and renamed
// into place when complete). kpatch gen --spec dir then generates from the
// copy.
func Export(dir string) error {
	return outdir.Create(dir, copyFS)
}

// copyFS writes the files of FS into dir.
func copyFS(dir string) error {
	return fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
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
	return outdir.Create(dir, func(tmp string) error {
		for p, b := range files {
			dst := filepath.Join(tmp, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
}
