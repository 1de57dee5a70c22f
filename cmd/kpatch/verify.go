package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"kpatch/plumbing/kernelsrc"
	"kpatch/series"
	"kpatch/verify"
)

// errFindings makes kpatch exit 1 after a report that has errors; the
// report has already said everything.
type errFindings struct{ n int }

func (e errFindings) Error() string { return fmt.Sprintf("%d errors", e.n) }

func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", "[--tree DIR] [--base REV] [-v N] [--spec DIR] [--json] [--ignore ID,...] [FILE]",
		`Check a series before it is posted: the kernel's rules for commit messages
and style, and the series' C invariants evaluated with modernc.org/cc/v4 for
x86_64 and i386 with its options on and off, at every patch.

Without FILE, the series kpatch gen would write (same flags) is checked.
With FILE (an mbox, a directory of .patch files, or a saved thread), the
posted series is; --tree/--base then give the base that edits to existing
files are applied to. Exit status 1 when there are errors.`)
	sf := fs.seriesFlags(seriesFlagSpec{treeHelp: "kernel tree: a git repository or a plain directory with --plain (default \".\" without FILE)"})
	tree, base, version, specDir, plain := sf.tree, sf.base, sf.version, sf.specDir, sf.plain
	jsonOut := fs.jsonFlag()
	ignore := fs.String("ignore", "", "comma-separated rule IDs (verify's or checkpatch's types) to leave out")
	checkpatch := fs.Bool("checkpatch", false, "also run the tree's scripts/checkpatch.pl on every patch and merge its findings")
	files, err := fs.parse(args, 0, 1)
	if err != nil {
		return err
	}
	var s *verify.Series
	if len(files) == 1 {
		var t *kernelsrc.Tree
		if *tree != "" {
			b := *base
			if b == "" {
				sp, err := series.LoadSpec(*specDir)
				if err != nil {
					return err
				}
				rev, err := sp.Revision(*version)
				if err != nil {
					return err
				}
				b = rev.Base
			}
			var err error
			if t, err = kernelsrc.Open(*tree, b, *plain); err != nil {
				return err
			}
		}
		var err error
		if s, err = verify.ReadMail(files[0], t); err != nil {
			return err
		}
	} else {
		if *tree == "" {
			*tree = "."
		}
		g, err := series.Generate(ctx, series.Options{Tree: *tree, Base: *base, Version: *version, SpecDir: *specDir, Plain: *plain})
		if err != nil {
			return err
		}
		if s, err = verify.FromGenerated(g); err != nil {
			return err
		}
	}
	var ids []string
	for _, id := range strings.Split(*ignore, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	opt := verify.Options{Ignore: ids}
	findings := verify.Run(s, opt)
	if *checkpatch {
		if s.Tree == nil {
			return fmt.Errorf("--checkpatch runs the tree's scripts/checkpatch.pl: give the tree with --tree")
		}
		fmt.Fprintf(stderr, "kpatch verify: running scripts/checkpatch.pl of %s on %d patches\n", s.Tree.Base, len(s.Patches))
		var err error
		if findings, err = verify.Checkpatch(ctx, s, findings, opt); err != nil {
			return err
		}
	}
	rep := verify.NewReport(s, findings)
	if *jsonOut {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if rep.Errors > 0 {
		return errFindings{rep.Errors}
	}
	return nil
}
