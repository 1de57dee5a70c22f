package series

import (
	"strings"

	"kpatch/plumbing/rangediff"
)

// RangeDiffPatches returns the patches as package rangediff compares them:
// commit ids abbreviated to 12 characters, author, commit message and diff.
func (s *Series) RangeDiffPatches() []rangediff.Patch {
	var out []rangediff.Patch
	for _, p := range s.Patches {
		var d strings.Builder
		for _, f := range p.Files {
			d.WriteString(s.fileDiff(f))
		}
		c := p.Commit
		if len(c) > abbrev {
			c = c[:abbrev]
		}
		out = append(out, rangediff.Patch{Commit: c, Author: p.Author, Message: p.Subject + "\n\n" + p.Log, Diff: d.String()})
	}
	return out
}

// RangeDiff returns the range-diff from prev to s, as git range-diff (and
// git format-patch --range-diff below its title) prints it.
func RangeDiff(prev, s *Series) string {
	return rangediff.Diff(prev.RangeDiffPatches(), s.RangeDiffPatches(), rangediff.DefaultCreationFactor)
}
