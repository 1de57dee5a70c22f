package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// Sentinel errors an *AnchorError matches.
var (
	ErrAnchorMissing   = errors.New("anchor not found")
	ErrAnchorAmbiguous = errors.New("anchor is ambiguous")
	ErrAlreadyPresent  = errors.New("already present")
	// ErrNoFile is an edit of a file the tree does not have.
	ErrNoFile = errors.New("the tree has no such file")
)

// noFile names a file an edit needs that the tree does not have (err says
// how the tree said so); other errors are returned as they are.
func noFile(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w (%v)", ErrNoFile, err)
	}
	return err
}

// AnchorError says which edit could not be placed and why.
type AnchorError struct {
	Src    string // where the edit is written in the series description
	File   string // the file of the tree being edited
	Anchor string // the operation and its arguments
	Err    error  // ErrAnchorMissing, ErrAnchorAmbiguous, ErrAlreadyPresent or another cause
	Detail string // e.g. the matching line numbers, as the base tree numbers them
	// Candidates are, for a missing anchor, the lines of the file most
	// like it, the likeliest first (see Candidate).
	Candidates []Candidate
}

// Candidate is a line of a file that an edit whose anchor is missing might
// have meant: a statement of the function, an include, a Kconfig symbol, a
// function, a struct member.
type Candidate struct {
	File string // the file (an edit's anchors can be in two files)
	Line int    // 1-based, as the base tree numbers it; 0 for a line the series adds
	Text string // the line, without its newline
}

// Error implements the error interface.
func (e *AnchorError) Error() string {
	s := fmt.Sprintf("%s: %q: %v", e.File, e.Anchor, e.Err)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *AnchorError) Unwrap() error { return e.Err }

// lineNumber returns how an error names line i (0-based) of path.
func lineNumber(files Files, path string, i int) string {
	bl, ok := files.(BaseLines)
	if !ok {
		return strconv.Itoa(i + 1)
	}
	if b, ok := bl.BaseLine(path, i+1); ok {
		return strconv.Itoa(b)
	}
	return fmt.Sprintf("%d (added by the series)", i+1)
}

// baseLine returns the base tree's number of line i (0-based) of path, 0
// for a line the series added.
func baseLine(files Files, path string, i int) int {
	bl, ok := files.(BaseLines)
	if !ok {
		return i + 1
	}
	if b, ok := bl.BaseLine(path, i+1); ok {
		return b
	}
	return 0
}

// anchorErr is an anchor that failed inside a file: detail says why, with
// "%s" where the numbers of lines (0-based indexes of the file as the edit
// found it) go, which Apply renders as the base tree numbers them.
type anchorErr struct {
	err    error
	detail string
	lines  []int
	path   string // the file the lines are in, when not the edit's
}

func (a *anchorErr) Error() string { return a.err.Error() }

func (a *anchorErr) render(files Files, path string) string {
	if len(a.lines) == 0 {
		return a.detail
	}
	if a.path != "" {
		path = a.path
	}
	ns := make([]string, len(a.lines))
	for i, l := range a.lines {
		ns[i] = lineNumber(files, path, l)
	}
	return fmt.Sprintf(a.detail, strings.Join(ns, ", "))
}

func missing(format string, args ...any) error {
	return &anchorErr{err: ErrAnchorMissing, detail: fmt.Sprintf(format, args...)}
}
