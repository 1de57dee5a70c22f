package main

import (
	"fmt"
	"io"

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
	if err := linux.Export(*out); err != nil {
		return err
	}
	fmt.Fprintln(stdout, *out)
	return nil
}
