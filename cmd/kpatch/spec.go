package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"kpatch/templates/linux"
)

func cmdSpec(args []string, stdout, stderr io.Writer) error {
	fset := newFlags("spec", "-o DIR", `Write the built-in series description (templates and patch descriptions,
see templates/linux and package spec) into a new directory, to edit it and
generate from the copy with kpatch gen --spec DIR.`, stderr)
	out := fset.String("o", "", "directory to create (must not exist)")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if *out == "" {
		fmt.Fprintln(stderr, "kpatch spec: -o DIR is required")
		fset.Usage()
		return errUsage
	}
	if _, err := os.Stat(*out); err == nil {
		return fmt.Errorf("%s already exists: give a new directory", *out)
	}
	parent := filepath.Dir(*out)
	tmp, err := os.MkdirTemp(parent, ".kpatch-spec-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(linux.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(tmp, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := fs.ReadFile(linux.FS, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	fmt.Fprintln(stdout, *out)
	return nil
}
