package main

import (
	"context"
	"fmt"
	"io"

	"kpatch/templates/linux"
)

func cmdSpec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("spec", "-o DIR", `Write the built-in series description (templates and patch descriptions,
see templates/linux and package spec) into a new directory, to edit it and
generate from the copy with kpatch gen --spec DIR.`)
	out := fset.String("o", "", "directory to create (must not exist)")
	if _, err := fset.parse(args, 0, 0); err != nil {
		return err
	}
	if *out == "" {
		return fset.usageError("-o DIR is required")
	}
	if err := linux.Export(*out); err != nil {
		return err
	}
	fmt.Fprintln(stdout, *out)
	return nil
}
