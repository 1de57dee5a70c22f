package main

import (
	"context"
	"fmt"
	"io"

	"kpatch/plumbing/kerneltree"
)

func cmdTree(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tree", "", `Print the path of the cached git tree of Debian's linux-source-6.12 (tag
v6.12), unpacking /usr/src/linux-source-6.12.tar.xz into the cache once
($KPATCH_CACHE, else $XDG_CACHE_HOME/kpatch or ~/.cache/kpatch).`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	dir, err := kerneltree.Debian612(ctx, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, dir)
	return nil
}
