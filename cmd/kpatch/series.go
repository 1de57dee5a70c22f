package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"kpatch/plumbing/mail"
	"kpatch/plumbing/rangediff"
	"kpatch/series"
)

var revisionArg = regexp.MustCompile(`^v(\d+)$`)

func cmdSeriesDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("series diff", "[--tree DIR] [--base REV] [--spec DIR] [--creation-factor N] OLD NEW",
		`Compare two versions of a series as git range-diff does: pairs of patches
('=' identical, '!' changed, with the diff of the two patches below it),
patches only the old series has ('<') and patches only the new one has ('>').
OLD and NEW are each a directory of patch files, an mbox, a thread saved as
text, or a revision of the series description (v11, v12), generated against
--tree at --base (default: each revision's recorded base).`)
	sf := fs.seriesFlags(seriesFlagSpec{tree: ".", treeHelp: "kernel tree to generate spec revisions against (a git repository)", noPlain: true, noVer: true})
	tree, base, specDir := sf.tree, sf.base, sf.specDir
	factor := fs.Int("creation-factor", rangediff.DefaultCreationFactor, "percentage by which creating or deleting a patch is cheaper than pairing it (git range-diff --creation-factor)")
	pos, err := fs.parse(args, 2, 2)
	if err != nil {
		return err
	}
	var sides [2][]rangediff.Patch
	for i, a := range pos {
		if sides[i], err = loadSide(ctx, a, *tree, *base, *specDir); err != nil {
			return err
		}
	}
	out, err := rangediff.DiffContext(ctx, sides[0], sides[1], rangediff.Options{CreationFactor: *factor, Mailmap: treeMailmap(*tree)})
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, out)
	return err
}

// loadSide reads one side of a range-diff: a spec revision ("v12", when no
// file of that name exists) or a posted series.
func loadSide(ctx context.Context, arg, tree, base, specDir string) ([]rangediff.Patch, error) {
	if m := revisionArg.FindStringSubmatch(arg); m != nil {
		if _, err := os.Stat(arg); err != nil {
			v, _ := strconv.Atoi(m[1])
			if v == 0 {
				// series.Options reads version 0 as "the newest".
				return nil, fmt.Errorf("%s: %w", arg, noRevision(specDir, v))
			}
			s, err := series.Generate(ctx, series.Options{Tree: tree, Base: base, Version: v, SpecDir: specDir})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", arg, err)
			}
			return s.RangeDiffPatches(), nil
		}
	}
	s, err := mail.Load(arg)
	if err != nil {
		return nil, badInput(fmt.Errorf("%s: %w: give a directory of patches, an mbox, a saved thread or a revision such as v11", arg, err))
	}
	return s.RangeDiffPatches(), nil
}

func cmdSeriesImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("series import", "FILE -o DIR",
		`Read a posted series (an mbox, a thread saved as text, or a directory of
patch files) and write its patches into a new directory, one git
format-patch file each (the cover letter as 0000), ready for git am or
kpatch series diff. Replies are left out; kpatch trailers reads them.`)
	out := fs.String("o", "", "directory to create (must not exist)")
	pos, err := fs.parse(args, 1, 1)
	if err != nil {
		return err
	}
	if *out == "" {
		return fs.usageError("-o DIR is required")
	}
	s, err := mail.Load(pos[0])
	if err != nil {
		return badInput(fmt.Errorf("%s: %w: give an mbox, a saved thread or a directory of patches", pos[0], err))
	}
	names, err := s.WriteDir(*out)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	fmt.Fprintf(stderr, "kpatch series import: v%d, %d patches, %d replies left out\n", s.Version, len(s.Patches), len(s.Replies))
	return nil
}
