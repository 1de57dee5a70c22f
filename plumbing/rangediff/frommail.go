package rangediff

import (
	"strings"

	"kpatch/plumbing/mail"
)

// FromMail returns the patches of a posted series as Diff compares them,
// as git range-diff shows commits: the commit id a patch's "From <sha>"
// line names, abbreviated to 12 characters (or, for a patch without one,
// an id made of its content), its author, commit message and diff.
func FromMail(s *mail.Series) []Patch {
	var out []Patch
	for _, p := range s.Patches {
		c := p.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if c == "" || strings.Trim(c, "0") == "" {
			c = p.ContentID()
		}
		out = append(out, Patch{Commit: c, Author: p.Author, Message: p.CommitMessage(), Diff: p.Diff})
	}
	return out
}
