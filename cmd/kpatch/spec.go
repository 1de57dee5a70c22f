package main

import (
	"context"
	"fmt"
	"io"

	"kpatch/series"
	"kpatch/templates/linux"
)

func cmdSpec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("spec", "-o DIR [-v N]", `Write the built-in series description (templates and patch descriptions,
see templates/linux and package spec) into a new directory, to edit it and
generate from the copy with kpatch gen --spec DIR. With -v N, write revision
N flattened instead, every guard resolved, to read or diff: its series file,
one NN-id.patch a patch and the created files after its last patch.`)
	out := fset.String("o", "", "directory to create (must not exist)")
	version := fset.Int("v", 0, "write this revision flattened")
	specDir := fset.String("spec", "", "with -v: the series description to read; default: the one built in")
	if _, err := fset.parse(args, 0, 0); err != nil {
		return err
	}
	if *out == "" {
		return fset.usageError("-o DIR is required")
	}
	if *version != 0 {
		return writeFlat(*specDir, *version, *out, stdout)
	}
	if err := linux.Export(*out); err != nil {
		return err
	}
	fmt.Fprintln(stdout, *out)
	return nil
}

// writeFlat writes revision v of the spec in specDir flattened into the new
// directory out.
func writeFlat(specDir string, v int, out string, stdout io.Writer) error {
	sp, err := series.LoadSpec(specDir)
	if err != nil {
		return err
	}
	r, err := sp.Revision(v)
	if err != nil {
		return err
	}
	files, err := r.Flatten()
	if err != nil {
		return err
	}
	if err := linux.WriteDir(out, files); err != nil {
		return err
	}
	fmt.Fprintln(stdout, out)
	return nil
}
