package hooks

import (
	"regexp"
	"strings"

	"kpatch/spec"
)

// Files is the state of the tree's files while a series is applied.
type Files interface {
	// Get returns the current content of a file of the tree.
	Get(path string) ([]byte, error)
	// Set replaces the content of a file.
	Set(path string, content []byte)
}

// BaseLines is implemented by a Files that knows the files as the base tree
// has them, before the series. Apply then gives the line numbers of its
// errors as the base tree numbers them, not shifted by earlier edits.
type BaseLines interface {
	// BaseLine returns the 1-based number in the base tree of line (1-based)
	// of the file's current content; ok is false for a line the series
	// added.
	BaseLine(path string, line int) (base int, ok bool)
}

// Op describes one operation of an edit: its arguments, what it does, what
// it attaches to, and how it finds the line to insert before. The table Ops
// is the one place an operation is named; the candidates for a missing
// anchor and Adds follow from its anchor kind.
type Op struct {
	Args   []string // argument names
	Does   string   // what it inserts where
	anchor anchor
	// at returns the 0-based line the edit's text goes before; nil for an
	// operation that rewrites the file itself (rewrite).
	at      func(f lines, e spec.Edit) (int, error)
	rewrite func(ed *Editor, f lines, data []byte, e spec.Edit, fail failFunc) error
}

// anchor is the kind of thing an operation attaches to.
type anchor int

const (
	anchorSection    anchor = iota // a MAINTAINERS section title
	anchorConfig                   // a Kconfig symbol
	anchorSortedLine               // a line among lines with a prefix
	anchorLine                     // a whole line
	anchorInclude                  // an #include
	anchorMember                   // a struct member
	anchorStatement                // a statement in a function
	anchorFunction                 // a function definition
	anchorGuard                    // the #endif of a header's include guard
)

// failFunc turns an error of placing an edit into an *AnchorError.
type failFunc func(err error, detail string, a ...any) error

// Ops lists the operations Apply knows.
var Ops = map[string]Op{
	"section": {[]string{"TITLE"}, "a MAINTAINERS section, between its neighbours by title", anchorSection,
		func(f lines, e spec.Edit) (int, error) { return f.section(e.Args[0]) }, nil},
	"config-after": {[]string{"SYMBOL"}, "a Kconfig entry after the entry of SYMBOL", anchorConfig,
		func(f lines, e spec.Edit) (int, error) { return f.configAfter(e.Args[0]) }, nil},
	"select-sorted": {[]string{"CONFIG"}, "a select line inside config CONFIG, between its neighbours by name", anchorConfig,
		func(f lines, e spec.Edit) (int, error) { return f.selectSorted(e.Args[0], e.Text) }, nil},
	"sorted-line": {[]string{"PREFIX"}, "a line among the lines starting with PREFIX, between its neighbours by name", anchorSortedLine,
		func(f lines, e spec.Edit) (int, error) { return f.sortedLine(e.Args[0], e.Text) }, nil},
	"line-after": {[]string{"LINE"}, "text after the line LINE", anchorLine,
		func(f lines, e spec.Edit) (int, error) {
			at, err := f.unique(func(l string) bool { return strings.TrimRight(l, "\n") == e.Args[0] }, 0, len(f))
			return at + 1, err
		}, nil},
	"include-after": {[]string{"<HEADER>"}, "an #include after the #include of HEADER", anchorInclude,
		func(f lines, e spec.Edit) (int, error) {
			at, err := f.unique(includeOf(e.Args[0]), 0, len(f))
			return at + 1, err
		}, nil},
	"include-before": {[]string{"<HEADER>"}, "an #include before the #include of HEADER", anchorInclude,
		func(f lines, e spec.Edit) (int, error) { return f.unique(includeOf(e.Args[0]), 0, len(f)) }, nil},
	"member-before": {[]string{"STRUCT", "MEMBER"}, "a member of struct STRUCT before MEMBER (and its comment)", anchorMember,
		func(f lines, e spec.Edit) (int, error) { return f.memberBefore(e.Args[0], e.Args[1]) }, nil},
	"statement-before": {[]string{"FUNCTION", "STATEMENT"}, "a statement in FUNCTION before the one that starts with STATEMENT (a bare name means a call)", anchorStatement,
		func(f lines, e spec.Edit) (int, error) { return f.statementBefore(e.Args[0], e.Args[1]) }, nil},
	"statement-after": {[]string{"FUNCTION", "STATEMENT"}, "a statement in FUNCTION after the one that starts with STATEMENT (a bare name means a call)", anchorStatement,
		func(f lines, e spec.Edit) (int, error) { return f.statementAfter(e.Args[0], e.Args[1]) }, nil},
	"after-function": {[]string{"FUNCTION"}, "text after the definition of FUNCTION", anchorFunction,
		func(f lines, e spec.Edit) (int, error) {
			fn, err := f.function(e.Args[0])
			at := fn.end
			if err == nil && at < len(f) && strings.TrimSpace(f[at]) == "" {
				at++
			}
			return at, err
		}, nil},
	"move-function": {[]string{"FUNCTION", "DEST", "BEFORE", "NEWNAME"}, "move FUNCTION to DEST before function BEFORE, renamed NEWNAME and made global", anchorFunction,
		nil, func(ed *Editor, f lines, _ []byte, e spec.Edit, fail failFunc) error {
			return moveFunction(ed, f, e, fail)
		}},
	"rename-calls": {[]string{"OLD", "NEW"}, "rename every call of OLD to NEW", anchorFunction,
		nil, renameCalls},
	"header-end": {nil, "text at the end of a header, before the #endif of its include guard", anchorGuard,
		func(f lines, _ spec.Edit) (int, error) { return f.guardEnd() }, nil},
}

// renameCalls renames every call of e.Args[0] in the file to e.Args[1].
func renameCalls(ed *Editor, _ lines, data []byte, e spec.Edit, fail failFunc) error {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(e.Args[0]) + `\(`)
	if !re.Match(data) {
		return fail(ErrAnchorMissing, "no call of %s", e.Args[0])
	}
	ed.files.Set(e.Path, re.ReplaceAll(data, []byte(e.Args[1]+"(")))
	return nil
}

// Apply places one edit. To place many edits on the same files, use an
// Editor: Apply splits the file in lines afresh every time.
func Apply(files Files, e spec.Edit) error {
	return NewEditor(files).Apply(e)
}
