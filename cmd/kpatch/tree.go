package main

import (
	"context"
	"fmt"
	"io"

	"kpatch/plumbing/kerneltree"
)

func cmdTree(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tree", "[--tags]", `Print the path of the cached git tree of Debian's linux-source-6.12 (tag
v6.12), unpacking /usr/src/linux-source-6.12.tar.xz into the cache once
($KPATCH_CACHE, else $XDG_CACHE_HOME/kpatch or ~/.cache/kpatch). With
--tags, print the tags it has instead, one a line: the bases it can give
(--base). To use it by default, set it once as git does:

    git config --global kpatch.tree "$(kpatch tree)"
    git config --global kpatch.base v6.12

(kpatch.stack sets --stack likewise.)`)
	tags := fs.Bool("tags", false, "print the tree's tags, the newest version first, instead of its path")
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	dir, err := kerneltree.Debian612(ctx, stderr)
	if err != nil {
		return err
	}
	if !*tags {
		fmt.Fprintln(stdout, dir)
		return nil
	}
	for _, t := range treeTags(dir) {
		fmt.Fprintln(stdout, t)
	}
	return nil
}
