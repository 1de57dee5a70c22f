package series

import (
	"strings"

	"kpatch/plumbing/rangediff"
)

// RangeDiffPatches returns the patches as package rangediff compares them:
// commit ids abbreviated to 12 characters, author, commit message and diff.
func (s *Series) RangeDiffPatches() ([]rangediff.Patch, error) {
	if err := s.prepareMail(); err != nil {
		return nil, err
	}
	var out []rangediff.Patch
	for _, p := range s.Patches {
		var d strings.Builder
		for _, f := range p.Files {
			text, _ := s.Diff(f)
			d.WriteString(text)
		}
		c := p.commit
		if len(c) > abbrev {
			c = c[:abbrev]
		}
		out = append(out, rangediff.Patch{Commit: c, Author: p.Author, Message: p.Subject + "\n\n" + p.Log, Diff: d.String()})
	}
	return out, nil
}

// RangeDiff returns the range-diff from prev to s, as git range-diff (and
// git format-patch --range-diff below its title) prints it.
func RangeDiff(prev, s *Series) (string, error) {
	a, err := prev.RangeDiffPatches()
	if err != nil {
		return "", err
	}
	b, err := s.RangeDiffPatches()
	if err != nil {
		return "", err
	}
	return rangediff.Diff(a, b, rangediff.DefaultCreationFactor), nil
}
