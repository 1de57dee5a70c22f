package main

import (
	"context"
	"flag"
	"fmt"

	"kpatch/series"
)

// revDiffFlags are gen's --interdiff and --range-diff: the cover letter
// ends with the diff against an earlier revision, as git format-patch
// --interdiff/--range-diff writes it.
type revDiffFlags struct {
	interdiff, rangeDiff *int
}

func addRevDiffFlags(fs *flag.FlagSet) revDiffFlags {
	return revDiffFlags{
		interdiff: fs.Int("interdiff", 0, "end the cover letter with the diff from revision N's final tree to this one's (git format-patch --interdiff)"),
		rangeDiff: fs.Int("range-diff", 0, "end the cover letter with the range-diff against revision N (git format-patch --range-diff)"),
	}
}

// apply generates the earlier revisions of the series sel names (the main
// series, or the same stacked one) on its tree, opened once for all of
// them, and adds the sections to the cover letter of s, msgs[0]. A
// revision both flags name is generated once.
func (f revDiffFlags) apply(ctx context.Context, sel *series.Selection, s *series.Series, msgs []series.Message) error {
	done := map[int]*series.Series{}
	prev := func(v int) (*series.Series, error) {
		if v == s.Revision.Version {
			return nil, badInput(fmt.Errorf("revision v%d is the one being written: give an earlier one", v))
		}
		if p, ok := done[v]; ok {
			return p, nil
		}
		psel, err := sel.WithVersion(v)
		if err != nil {
			return nil, err
		}
		p, err := series.Generate(ctx, psel)
		if err != nil {
			return nil, fmt.Errorf("revision v%d: %w", v, err)
		}
		done[v] = p.Own()
		return done[v], nil
	}
	if *f.interdiff != 0 {
		p, err := prev(*f.interdiff)
		if err != nil {
			return fmt.Errorf("--interdiff: %w", err)
		}
		msgs[0] = series.AppendToCover(msgs[0], series.InterdiffTitle(p.Revision.Version), s.Interdiff(p))
	}
	if *f.rangeDiff != 0 {
		p, err := prev(*f.rangeDiff)
		if err != nil {
			return fmt.Errorf("--range-diff: %w", err)
		}
		rd, err := series.RangeDiff(p, s)
		if err != nil {
			return fmt.Errorf("--range-diff: %w", err)
		}
		msgs[0] = series.AppendToCover(msgs[0], series.RangeDiffTitle(p.Revision.Version), rd)
	}
	return nil
}
