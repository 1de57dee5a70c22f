package mail

import (
	"strings"

	"kpatch/plumbing/rangediff"
)

// RangeDiffPatches returns the series' patches as package rangediff
// compares them, as git range-diff shows commits: the commit id a
// patch's "From <sha>" line names, abbreviated to 12 characters (or, for
// a patch without one, an id made of its content), its author, commit
// message and diff.
func (s *Series) RangeDiffPatches() []rangediff.Patch {
	var out []rangediff.Patch
	for _, p := range s.Patches {
		c := p.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if c == "" || strings.Trim(c, "0") == "" {
			c = p.ContentID()
		}
		out = append(out, rangediff.Patch{Commit: c, Author: p.Author, Message: p.CommitMessage(), Diff: p.Diff})
	}
	return out
}
