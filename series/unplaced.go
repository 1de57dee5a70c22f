package series

import (
	"fmt"
	"strings"

	"kpatch/series/hooks"
	"kpatch/spec"
)

// Unplaced is one edit of the series that cannot be placed in the tree.
type Unplaced struct {
	Patch   int       // the patch's number
	PatchID string    // the patch's id in the series description
	Edit    spec.Edit // the edit
	// After is, when the anchor is missing only because an earlier edit
	// that could not be placed adds it, where that edit is written.
	After string
	*hooks.AnchorError
}

// Error returns the edit's one-line report: "patch 5 (cache): FILE:
// "ANCHOR": anchor not found [v11/05-cache.patch:26]", and for an edit
// that waits for an earlier one, "(added by the unplaced edit at SRC)".
func (u *Unplaced) Error() string {
	s := fmt.Sprintf("patch %d (%s): %v [%s]", u.Patch, u.PatchID, u.AnchorError, u.Src)
	if u.After != "" {
		s += " (it is added by the unplaced edit at " + u.After + ")"
	}
	return s
}

// Unwrap returns the *hooks.AnchorError.
func (u *Unplaced) Unwrap() error { return u.AnchorError }

// CandidateLines returns the lines that show the edit's candidates, one
// per candidate, indented: "    FILE:LINE: TEXT".
func (u *Unplaced) CandidateLines() []string {
	var out []string
	for _, c := range u.Candidates {
		if c.Line > 0 {
			out = append(out, fmt.Sprintf("    %s:%d: %s", c.File, c.Line, c.Text))
		} else {
			out = append(out, fmt.Sprintf("    %s (a line the series adds): %s", c.File, c.Text))
		}
	}
	return out
}

// UnplacedError lists every edit of the series that cannot be placed, as a
// compiler lists every error; nothing is generated.
type UnplacedError struct {
	Base  string // the tree's base, as given
	Edits []*Unplaced
}

// Summary returns the one line that closes the report: how many edits,
// that nothing was written, and what to do.
func (e *UnplacedError) Summary() string {
	n := "1 edit"
	if len(e.Edits) != 1 {
		n = fmt.Sprintf("%d edits", len(e.Edits))
	}
	after := 0
	for _, u := range e.Edits {
		if u.After != "" {
			after++
		}
	}
	if after > 0 {
		n += fmt.Sprintf(" (%d of them only because of another)", after)
	}
	return fmt.Sprintf("%s cannot be placed in %s, nothing written: fix the anchors in a copy of the series description (kpatch spec -o DIR, then kpatch gen --spec DIR) or choose another --base", n, e.Base)
}

// Error returns every edit's line with its candidate lines under it, then
// the summary line.
func (e *UnplacedError) Error() string {
	var b strings.Builder
	for _, u := range e.Edits {
		b.WriteString(u.Error() + "\n")
		for _, l := range u.CandidateLines() {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString(e.Summary())
	return b.String()
}

// Unwrap returns the edits' errors, for errors.Is and errors.As.
func (e *UnplacedError) Unwrap() []error {
	errs := make([]error, len(e.Edits))
	for i, u := range e.Edits {
		errs[i] = u
	}
	return errs
}
