// Package seriestest generates the series for tests as kpatch's commands
// do from their flags: select the revision, open the tree, generate.
package seriestest

import (
	"context"
	"testing"

	"kpatch/series"
)

// Options are the flags that name a series: the tree and base, the
// revision (of a stacked series, laid on revision On of the main one), the
// series description, and what kpatch gen adds.
type Options struct {
	Tree, Base string
	Version    int
	Stack      string
	On         int
	SpecDir    string
	Plain      bool
	To, Cc     []string
	// WithPrerequisite keeps a stacked series' prerequisite in it, as
	// kpatch test and verify take it; without, the series is as posted
	// (series.Series.Own), as kpatch gen writes it.
	WithPrerequisite bool
}

// Select returns the selection o names, its tree open.
func Select(o Options) (*series.Selection, error) {
	sel, err := series.Select(o.SpecDir, o.Version, o.Stack, o.On)
	if err != nil {
		return nil, err
	}
	if err := sel.OpenTree(o.Tree, o.Base, o.Plain); err != nil {
		return nil, err
	}
	return sel, nil
}

// Generate generates the series o names.
func Generate(ctx context.Context, o Options) (*series.Series, error) {
	sel, err := Select(o)
	if err != nil {
		return nil, err
	}
	s, err := series.Generate(ctx, sel)
	if err != nil {
		return nil, err
	}
	if !o.WithPrerequisite {
		s = s.Own()
	}
	s.AddRecipients(o.To, o.Cc)
	return s, nil
}

// Messages returns the series' mail (series.Series.Messages), failing
// the test on an error.
func Messages(t testing.TB, s *series.Series) []series.Message {
	t.Helper()
	msgs, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TipTree returns the tree of the series' last commit, failing the test
// on an error.
func TipTree(t testing.TB, s *series.Series) string {
	t.Helper()
	tree, err := s.TipTree()
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// RangeDiff returns series.RangeDiff(prev, s), failing the test on an
// error.
func RangeDiff(t testing.TB, prev, s *series.Series) string {
	t.Helper()
	out, err := series.RangeDiff(prev, s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
