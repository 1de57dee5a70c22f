package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"kpatch/plumbing/gitapply"
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
text, or a revision of the series description generated against --tree at
--base (default: each revision's recorded base): v11, v12 of the main
series, or a stacked series' own patches, NAME (its newest revision) or
NAME:vN ("kpatch series diff x86:v2 x86-6.19": what Linux 6.19 merged
against the x86 series posted before it).`)
	sf := fs.seriesFlags(seriesFlagSpec{tree: ".", treeHelp: "kernel tree to generate spec revisions against (a git repository)", noPlain: true, noVer: true})
	tree := sf.tree
	factor := fs.Int("creation-factor", rangediff.DefaultCreationFactor, "percentage by which creating or deleting a patch is cheaper than pairing it (git range-diff --creation-factor)")
	pos, err := fs.parse(args, 2, 2)
	if err != nil {
		return err
	}
	sel, err := sf.selection(false)
	if err != nil {
		return err
	}
	var sides [2][]rangediff.Patch
	for i, a := range pos {
		if sides[i], err = loadSide(ctx, a, sel, sf); err != nil {
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

// loadSide reads one side of a range-diff: a revision of the series sel
// names ("v12", when no file of that name exists), generated on tree at
// base (the tree opened once for both sides), or a posted series.
func loadSide(ctx context.Context, arg string, sel *series.Selection, sf *seriesFlags) ([]rangediff.Patch, error) {
	if m := revisionArg.FindStringSubmatch(arg); m != nil {
		if _, err := os.Stat(arg); err != nil {
			v, _ := strconv.Atoi(m[1])
			if v == 0 {
				// Selection.WithVersion reads version 0 as "the newest".
				return nil, fmt.Errorf("%s: %w", arg, noRevision(sel.Spec))
			}
			rsel, err := sel.WithVersion(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", arg, err)
			}
			return generateSide(ctx, arg, rsel, sel, sf)
		}
	}
	if m := stackArg.FindStringSubmatch(arg); m != nil && sel.Spec.HasStack(m[1]) {
		if _, err := os.Stat(arg); err != nil {
			v, _ := strconv.Atoi(m[2])
			if m[2] != "" && v == 0 {
				return nil, badUsage("%s: revisions count from v1: give NAME for the newest or NAME:vN", arg)
			}
			rev, err := sel.Spec.Stack(m[1], v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", arg, err)
			}
			return generateSide(ctx, arg, &series.Selection{Spec: sel.Spec, Revision: rev, Tree: sel.Tree}, sel, sf)
		}
	}
	s, err := mail.Load(arg)
	if err != nil {
		return nil, mailInputError(err, "give a directory of patches, an mbox, a saved thread or a revision such as v11")
	}
	if err := oneRevision(s); err != nil {
		return nil, err
	}
	return rangediff.FromMail(s), nil
}

// stackArg is a side naming a stacked series: "x86-6.19" (its newest
// revision) or "x86:v2".
var stackArg = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*?)(?::v(\d+))?$`)

// generateSide generates the own patches of the revision rsel selects
// for the side arg, opening the tree the first time a side needs it
// (sel keeps it for the other side when --base names one base).
func generateSide(ctx context.Context, arg string, rsel, sel *series.Selection, sf *seriesFlags) ([]rangediff.Patch, error) {
	if rsel.Tree == nil {
		if err := sf.openTree(rsel); err != nil {
			return nil, fmt.Errorf("%s: %w", arg, err)
		}
		if *sf.base != "" { // the same tree serves the other side
			sel.Tree = rsel.Tree
		}
	}
	s, err := series.Generate(ctx, rsel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	return s.Own().RangeDiffPatches()
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
		return mailInputError(err, "give an mbox, a saved thread or a directory of patches")
	}
	if err := oneRevision(s); err != nil {
		return err
	}
	for _, p := range s.Patches {
		if _, err := gitapply.CheckPaths(p.Files); err != nil {
			return badInput(fmt.Errorf("%s:%d: patch %d of %d (%q): %w (git am refuses it): give patches whose files are inside the tree", p.File, p.Line, p.Number, p.Total, p.Title, err))
		}
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

// oneRevision refuses a series whose patches (or cover letter) are of
// more than one revision, "[PATCH v2 1/2]" and "[PATCH v3 2/2]": they
// are not one posting, and neither number names them (exit 2). It names
// the first patch of another revision than the first patch's.
func oneRevision(s *mail.Series) error {
	if len(s.Patches) == 0 {
		return nil
	}
	first := s.Patches[0]
	if s.Cover != nil {
		if v := mail.ParseSubject(s.Cover.Subject).Version; v != first.Version {
			where := fmt.Sprintf("line %d", first.Line)
			if first.File != s.Cover.File {
				where = fmt.Sprintf("%s:%d", first.File, first.Line)
			}
			return badInput(fmt.Errorf("%s:%d: the cover letter is of v%d, patch %d of %d (%s) of v%d: give the mails of one revision (b4 am -v N picks one from a thread)",
				s.Cover.File, s.Cover.Line, v, first.Number, first.Total, where, first.Version))
		}
	}
	for _, p := range s.Patches[1:] {
		if p.Version != first.Version {
			return badInput(fmt.Errorf("%s:%d: patch %d of %d is of v%d, patch %d of %d (line %d) of v%d: give the mails of one revision (b4 am -v N picks one from a thread)",
				p.File, p.Line, p.Number, p.Total, p.Version, first.Number, first.Total, first.Line, first.Version))
		}
	}
	return nil
}

// mailInputError is the refusal of mail a command was given (exit 2).
// mail's errors name the file (and the line) and, where something in the
// mail is wrong, what to do; the command's own advice, what it reads, is
// added where mail has none: not mail, no patches, no such file.
func mailInputError(err error, advice string) error {
	if errors.Is(err, mail.ErrNotMail) || errors.Is(err, mail.ErrNoPatches) || errors.Is(err, mail.ErrNoMessages) || errors.Is(err, os.ErrNotExist) {
		err = fmt.Errorf("%w: %s", err, advice)
	}
	return badInput(err)
}
