// Package hooks places a series' edits into files that already exist in the
// kernel tree by what they attach to, never by line number or fuzzy context:
// a Kconfig entry after a named symbol, a select in sorted order inside a
// named config, a line in sorted order among lines with a prefix, a
// MAINTAINERS section in sorted order, an #include after a named include, a
// statement before a named statement inside a named function, a struct
// member before a named member, a declaration after a named function, and a
// function moved to another file under a new name with its calls renamed.
//
// # Sorted placement
//
// Kernel lists are often sorted only in runs (x86's select list in Linux
// 6.12 is), so "before the first greater entry" is not where a
// maintainer puts an entry. select-sorted, sorted-line and section place a
// new entry X between its alphabetical neighbours: the adjacent pair of
// entries a < X < b that is nearest to X by name. The list is read with a
// sentinel before its first entry and one after its last, so a pair always
// brackets X. Of the pairs that do, the nearest has the fewest entries of
// the list whose names sort strictly between a and b (none when a and b are
// X's predecessor and successor in the whole list); a tie goes to the pair
// whose a or b shares the longest prefix with X, then to the first pair in
// the file. X goes right before b (and the comment lines right above b), or
// after the last entry when b is the end sentinel. In a sorted list that is
// before the first greater entry; when no two entries bracket X (the list
// descends around it, "C B A" for "AB"), X goes at the start or the end of
// the list, whichever of the two sentinel pairs is nearer. Names compare
// byte-wise; MAINTAINERS titles compare case-insensitively, and the
// sections end at THE REST.
//
// An anchor that is missing, or that matches more than once, is an
// *AnchorError (matching ErrAnchorMissing or ErrAnchorAmbiguous with
// errors.Is) naming the file and the anchor. The lines it names are
// numbered as the base tree numbers them when the Files implements
// BaseLines, not shifted by earlier edits. For a missing anchor it lists
// the lines of the file most like it (Candidates): the statements of the
// function, the includes of the file, the Kconfig symbols, the functions,
// the struct members. Adds tells whether an edit's text provides another
// edit's anchor, so that an edit missing its anchor only because an
// earlier one could not be placed can say so.
package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"kpatch/spec"
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

// Editor places edits on the files of one Files, keeping every file it
// edits split in lines from one edit to the next: a file of n lines that
// takes k edits is split once and copied k times, not split and joined k
// times (MAINTAINERS has 25,000 lines). It recognises a file it split by
// the slice the Files returns, so the Files must not change a slice it
// has returned or been given in place (Apply never does). An Editor is not
// safe for concurrent use.
type Editor struct {
	files Files
	split map[string]splitFile
}

// splitFile is a file's content and its lines, as the Editor last saw it.
// After an insertion the lines are those before it, and the insertion is
// made in them when the file is edited again (most files take one edit).
type splitFile struct {
	data  []byte
	lines lines
	at    int   // where text goes in lines
	text  lines // nil: lines are data's
}

// NewEditor returns an Editor that places edits on files.
func NewEditor(files Files) *Editor {
	return &Editor{files: files, split: map[string]splitFile{}}
}

// lines returns data, the current content of path, split in lines: the
// lines kept from the last edit when data is the slice that edit set.
func (ed *Editor) lines(path string, data []byte) lines {
	if c, ok := ed.split[path]; ok && sameSlice(c.data, data) {
		if c.text != nil {
			c.lines, c.text = c.lines.insert(c.at, c.text), nil
			ed.split[path] = c
		}
		return c.lines
	}
	f := split(data)
	ed.split[path] = splitFile{data: data, lines: f}
	return f
}

// splice returns data with text inserted at off, in new memory.
func splice(data []byte, off int, text string) []byte {
	out := make([]byte, 0, len(data)+len(text))
	out = append(out, data[:off]...)
	out = append(out, text...)
	return append(out, data[off:]...)
}

// sameSlice reports whether a and b are the same bytes of the same array.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Apply places one edit.
func (ed *Editor) Apply(e spec.Edit) error {
	files := ed.files
	anchor := strings.TrimSpace(e.Op + " " + strings.Join(e.Args, " "))
	var fail failFunc = func(err error, detail string, a ...any) error {
		ae := &AnchorError{Src: e.Src, File: e.Path, Anchor: anchor, Err: err, Detail: fmt.Sprintf(detail, a...)}
		var inner *anchorErr
		if errors.As(err, &inner) {
			ae.Err = inner.err
			ae.Detail = inner.render(files, e.Path)
			if detail != "" {
				ae.Detail = fmt.Sprintf(detail, a...) + ae.Detail
			}
		}
		if errors.Is(ae.Err, ErrAnchorMissing) {
			ae.Candidates = candidates(files, e)
		}
		return ae
	}
	op, ok := Ops[e.Op]
	if !ok {
		return fail(fmt.Errorf("unknown operation %q", e.Op), "")
	}
	if len(e.Args) != len(op.Args) {
		return fail(fmt.Errorf("%s takes %s: %s", e.Op, strings.Join(op.Args, " "), op.Does), "")
	}
	data, err := files.Get(e.Path)
	if err != nil {
		return fail(noFile(err), "")
	}
	if at, ok := placeInBytes[e.Op]; ok && len(e.Text) > 0 {
		if off, ok := at(data, e); ok {
			// Placed without splitting the file: a later edit of
			// it splits it afresh.
			out := splice(data, off, e.Text)
			files.Set(e.Path, out)
			delete(ed.split, e.Path)
			return nil
		}
		// Refused: the lines' way says why.
	}
	f := ed.lines(e.Path, data)
	if op.rewrite != nil {
		return op.rewrite(ed, f, data, e, fail)
	}
	text := splitString(e.Text)
	at, err := op.at(f, e)
	if err != nil {
		return fail(err, "")
	}
	if len(text) == 0 {
		return fail(errors.New("the edit has no text to insert"), "")
	}
	// The new content is the old one with the text spliced in at the
	// line's offset: the same bytes as joining the new lines, without
	// joining 25,000 of them.
	off := 0
	for _, l := range f[:at] {
		off += len(l)
	}
	out := splice(data, off, e.Text)
	files.Set(e.Path, out)
	ed.split[e.Path] = splitFile{data: out, lines: f, at: at, text: text}
	return nil
}

// prefiltered returns re.MatchString, tried only on lines that contain
// want: most lines of a kernel file are rejected without the regexp.
func prefiltered(want string, re *regexp.Regexp) func(string) bool {
	return func(l string) bool { return strings.Contains(l, want) && re.MatchString(l) }
}

// includeOf matches the #include line of header ("<linux/x.h>").
func includeOf(header string) func(string) bool {
	return prefiltered(header, regexp.MustCompile(`^#\s*include\s+`+regexp.QuoteMeta(header)+`(\s|$)`))
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

// atLines is an anchorErr about lines of the file; detail has one "%s".
func atLines(err error, detail string, lines ...int) error {
	return &anchorErr{err: err, detail: detail, lines: lines}
}

// lines is a file split after every newline.
type lines []string

func split(b []byte) lines {
	if len(b) == 0 {
		return nil
	}
	return splitString(string(b))
}

// splitString is split of a string.
func splitString(s string) lines {
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func (f lines) bytes() []byte { return []byte(strings.Join(f, "")) }

func (f lines) insert(at int, text lines) lines {
	out := make(lines, 0, len(f)+len(text))
	out = append(out, f[:at]...)
	out = append(out, text...)
	return append(out, f[at:]...)
}

// unique returns the index of the only line in [from, to) that matches.
func (f lines) unique(match func(string) bool, from, to int) (int, error) {
	var hits []int
	for i := from; i < to; i++ {
		if match(f[i]) {
			hits = append(hits, i)
		}
	}
	switch len(hits) {
	case 0:
		return 0, missing("")
	case 1:
		return hits[0], nil
	}
	return 0, atLines(ErrAnchorAmbiguous, "lines %s", hits...)
}

// guardEnd returns the line of the #endif that closes a header's include
// guard: its last line that is not blank.
func (f lines) guardEnd() (int, error) {
	for i := len(f) - 1; i >= 0; i-- {
		switch t := strings.TrimSpace(f[i]); {
		case t == "":
			continue
		case strings.HasPrefix(t, "#endif"):
			return i, nil
		default:
			return 0, missing("the header does not end with the #endif of its include guard")
		}
	}
	return 0, missing("empty file")
}

// commentAbove returns the first line of the comment block that ends right
// above line i, or i when there is none.
func (f lines) commentAbove(i int) int {
	j := i
	for j > 0 {
		t := strings.TrimSpace(f[j-1])
		if strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") || strings.HasSuffix(t, "*/") || strings.HasPrefix(t, "//") {
			j--
			continue
		}
		break
	}
	return j
}

// isMaintainersField reports whether l is a MAINTAINERS field line,
// /^[A-Z]:\t/.
func isMaintainersField(l string) bool {
	return len(l) >= 3 && l[0] >= 'A' && l[0] <= 'Z' && l[1] == ':' && l[2] == '\t'
}

// placeInBytes are the operations that can find where their text goes in
// a file's bytes, without splitting it in lines (MAINTAINERS has 25,000):
// each returns the byte offset of the line the text goes before, the one
// the operation's at finds, or false when that one would refuse (its
// error says why).
var placeInBytes = map[string]func(data []byte, e spec.Edit) (int, bool){
	"section": func(data []byte, e spec.Edit) (int, bool) { return sectionOffset(data, e.Args[0]) },
}

// sectionOffset is section on the bytes of the file: the byte offset of
// the line section returns, or false where section fails.
func sectionOffset(data []byte, title string) (int, bool) {
	var entries []entry
	var offsets []int // byte offset of each entry's line
	n := 0            // lines
	if len(data) > 0 {
		n = bytes.Count(data, []byte{'\n'})
		if data[len(data)-1] != '\n' {
			n++
		}
	}
	// MAINTAINERS has a section every 9 lines or so: sized once.
	entries = make([]entry, 0, n/8+1)
	offsets = make([]int, 0, n/8+1)
	end, endOff := n, len(data)
	// line i+1 starts at next; prevBlank says whether line i-1 is blank.
	lineAt := func(off int) []byte {
		j := bytes.IndexByte(data[off:], '\n')
		if j < 0 {
			return data[off:]
		}
		return data[off : off+j+1]
	}
	off := 0
	prev := lineAt(0)
	off += len(prev)
	for i := 1; i+1 < n; i++ {
		l := lineAt(off)
		blank := len(prev) == 0 || (prev[0] == ' ' || prev[0] == '\t' || prev[0] == '\n' || prev[0] == '\r' || prev[0] >= 0x80 || prev[0] == '\v' || prev[0] == '\f') && len(bytes.TrimSpace(prev)) == 0
		if blank {
			t := bytes.TrimRight(l, "\n")
			next := lineAt(off + len(l))
			if len(t) > 0 && !isMaintainersFieldBytes(t) && isMaintainersFieldBytes(next) {
				if string(t) == "THE REST" {
					end, endOff = i, off
					break
				}
				entries = append(entries, entry{strings.ToUpper(string(t)), i, i})
				offsets = append(offsets, off)
			}
		}
		prev = l
		off += len(l)
	}
	if len(entries) == 0 {
		return 0, false
	}
	at, dup := placeSorted(entries, strings.ToUpper(title), end)
	if dup >= 0 {
		return 0, false
	}
	if at == end {
		return endOff, true
	}
	for k, e := range entries {
		if e.start == at {
			return offsets[k], true
		}
	}
	return 0, false
}

// isMaintainersFieldBytes is isMaintainersField of a line's bytes.
func isMaintainersFieldBytes(l []byte) bool {
	return len(l) >= 3 && l[0] >= 'A' && l[0] <= 'Z' && l[1] == ':' && l[2] == '\t'
}

// section places a MAINTAINERS section among the sections before THE REST,
// by title, case-insensitively.
func (f lines) section(title string) (int, error) {
	var entries []entry
	end := len(f)
	for i := 1; i+1 < len(f); i++ {
		t := strings.TrimRight(f[i], "\n")
		if strings.TrimSpace(f[i-1]) != "" || t == "" || isMaintainersField(t) || !isMaintainersField(f[i+1]) {
			continue
		}
		if t == "THE REST" {
			end = i
			break
		}
		entries = append(entries, entry{strings.ToUpper(t), i, i})
	}
	if len(entries) == 0 {
		return 0, missing("no MAINTAINERS sections")
	}
	at, dup := placeSorted(entries, strings.ToUpper(title), end)
	if dup >= 0 {
		return 0, atLines(ErrAlreadyPresent, "section at line %s", entries[dup].line)
	}
	return at, nil
}

var kconfigTop = regexp.MustCompile(`^(config|menuconfig|choice|endchoice|menu|endmenu|if|endif|source|comment|mainmenu)\b`)

func (f lines) configAfter(sym string) (int, error) {
	re := regexp.MustCompile(`^(menu)?config\s+` + regexp.QuoteMeta(sym) + `\s*$`)
	i, err := f.unique(prefiltered(sym, re), 0, len(f))
	if err != nil {
		return 0, err
	}
	j := i + 1
	for j < len(f) && !kconfigTop.MatchString(f[j]) {
		j++
	}
	for j > i+1 && strings.HasPrefix(f[j-1], "#") {
		j--
	}
	return j, nil
}

var selectRE = regexp.MustCompile(`^\s*select\s+(\S+)`)

func (f lines) selectSorted(config, text string) (int, error) {
	m := selectRE.FindStringSubmatch(text)
	if m == nil {
		return 0, fmt.Errorf("the text is not a select line")
	}
	re := regexp.MustCompile(`^config\s+` + regexp.QuoteMeta(config) + `\s*$`)
	i, err := f.unique(prefiltered(config, re), 0, len(f))
	if err != nil {
		return 0, err
	}
	end := i + 1
	for end < len(f) && !kconfigTop.MatchString(f[end]) {
		end++
	}
	return f.sortedAmong(i+1, end, m[1], func(l string) (string, bool) {
		if s := selectRE.FindStringSubmatch(l); s != nil {
			return s[1], true
		}
		return "", false
	})
}

func (f lines) sortedLine(prefix, text string) (int, error) {
	if !strings.HasPrefix(text, prefix) {
		return 0, fmt.Errorf("the text does not start with %q", prefix)
	}
	key := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(text, "\n", 2)[0], prefix))
	return f.sortedAmong(0, len(f), key, func(l string) (string, bool) {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(strings.TrimPrefix(l, prefix)), true
		}
		return "", false
	})
}

// sortedAmong returns where key goes among the keyed lines of [from, to),
// by placeSorted: before the right neighbour and the comment lines right
// above it ("# ..." or C comments), or after the last keyed line.
func (f lines) sortedAmong(from, to int, key string, keyOf func(string) (string, bool)) (int, error) {
	var entries []entry
	prev := from // the line after the previous entry
	for i := from; i < to; i++ {
		if k, ok := keyOf(f[i]); ok {
			entries = append(entries, entry{k, f.commentsAbove(i, prev), i})
			prev = i + 1
		}
	}
	if len(entries) == 0 {
		return 0, missing("no lines to sort among")
	}
	at, dup := placeSorted(entries, key, prev)
	if dup >= 0 {
		return 0, atLines(ErrAlreadyPresent, "line %s", entries[dup].line)
	}
	return at, nil
}

// commentsAbove returns the first of the comment lines ("#" alone or
// followed by a blank, or C comment lines) that stand right above line i,
// not above from; i when there are none.
func (f lines) commentsAbove(i, from int) int {
	j := i
	for j > from {
		t := strings.TrimSpace(f[j-1])
		if t == "#" || strings.HasPrefix(t, "# ") || strings.HasPrefix(t, "#\t") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "//") {
			j--
			continue
		}
		break
	}
	return j
}

// entry is one entry of a sorted list: its key, its first line (where an
// entry that sorts right before it goes) and the line that has its key.
type entry struct {
	key         string
	start, line int
}

// placeSorted returns where an entry with key goes in a list that is sorted
// by key, perhaps only in runs: between its alphabetical neighbours, the
// adjacent pair a < key < b nearest to it by name, as a maintainer places an
// entry. Precisely:
//
//   - The list is read with a sentinel before its first entry (less than
//     every key) and one after its last (greater than every key), so at
//     least one adjacent pair brackets key.
//   - Of the pairs that bracket key, the nearest is the one with the fewest
//     entries of the list whose keys sort strictly between a and b (0 when a
//     and b are key's predecessor and successor in the whole list); then the
//     one whose a or b shares the longest prefix with key; then the first in
//     the file.
//   - The entry goes at b's first line, or at end (the line after the list)
//     when b is the sentinel after the last entry.
//
// So in a sorted list key goes before the first greater entry; in a list
// sorted in runs, into the run where its neighbours by name stand, not
// before the first greater entry of an earlier run; and when no two entries
// bracket key (the list descends around it, e.g. "B C A" for "AB"), at the
// start or the end of the list, whichever sentinel pair is nearer. When an
// entry already has key, placeSorted returns its index as dup (else -1).
func placeSorted(entries []entry, key string, end int) (at, dup int) {
	for i, e := range entries {
		if e.key == key {
			return 0, i
		}
	}
	sorted := make([]string, len(entries))
	for i, e := range entries {
		sorted[i] = e.key
	}
	sort.Strings(sorted)
	// between counts the entries whose keys sort strictly between a and b;
	// "" with low/high set stands for a sentinel.
	between := func(a string, aLow bool, b string, bHigh bool) int {
		lo := 0
		if !aLow {
			lo = sort.Search(len(sorted), func(i int) bool { return sorted[i] > a })
		}
		hi := len(sorted)
		if !bHigh {
			hi = sort.SearchStrings(sorted, b)
		}
		return max(hi-lo, 0)
	}
	best, bestWidth, bestPrefix := -1, -1, -1
	for i := 0; i <= len(entries); i++ {
		// The pair (entries[i-1], entries[i]); i == 0 and i == len are
		// the sentinel pairs.
		aLow, bHigh := i == 0, i == len(entries)
		var a, b string
		if !aLow {
			a = entries[i-1].key
		}
		if !bHigh {
			b = entries[i].key
		}
		if (!aLow && a >= key) || (!bHigh && b <= key) {
			continue
		}
		w, p := between(a, aLow, b, bHigh), 0
		if !aLow {
			p = commonPrefix(a, key)
		}
		if !bHigh {
			p = max(p, commonPrefix(b, key))
		}
		if best < 0 || w < bestWidth || w == bestWidth && p > bestPrefix {
			best, bestWidth, bestPrefix = i, w, p
		}
	}
	if best == len(entries) {
		return end, -1
	}
	return entries[best].start, -1
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func (f lines) memberBefore(strct, member string) (int, error) {
	start, err := f.unique(prefiltered(strct, regexp.MustCompile(`^struct\s+`+regexp.QuoteMeta(strct)+`\s*\{`)), 0, len(f))
	if err != nil {
		return 0, err
	}
	end := start + 1
	for end < len(f) && !strings.HasPrefix(f[end], "}") {
		end++
	}
	re := regexp.MustCompile(`[\s*]` + regexp.QuoteMeta(member) + `\s*(\[[^]]*\])?\s*(__[a-z_]+(\([^)]*\))?\s*)*;`)
	i, err := f.unique(prefiltered(member, re), start+1, end)
	if err != nil {
		return 0, err
	}
	return f.commentAbove(i), nil
}

type span struct{ start, end int } // lines [start, end), end just past the closing brace

// function finds the one definition of name: a line at column 0 that calls
// name( and is not a declaration, followed by a body in braces.
func (f lines) function(name string) (span, error) {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `\(`)
	var defs []span
	for i := 0; i < len(f); i++ {
		l := f[i]
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' || !strings.Contains(l, name+"(") || !re.MatchString(l) {
			continue
		}
		// Find where the signature ends: "{" or ";".
		j := i
		for ; j < len(f) && j < i+20; j++ {
			t := strings.TrimRight(f[j], " \t\n")
			if strings.HasSuffix(t, ";") || strings.HasSuffix(t, ")") && j+1 < len(f) && strings.HasPrefix(f[j+1], "{") || strings.HasSuffix(t, "{") {
				break
			}
		}
		if j >= len(f) || strings.HasSuffix(strings.TrimRight(f[j], " \t\n"), ";") {
			continue
		}
		if !strings.HasSuffix(strings.TrimRight(f[j], " \t\n"), "{") {
			j++
		}
		k := j + 1
		for k < len(f) && !strings.HasPrefix(f[k], "}") {
			k++
		}
		if k >= len(f) {
			continue
		}
		defs = append(defs, span{i, k + 1})
		i = k
	}
	switch len(defs) {
	case 0:
		return span{}, missing("no definition of %s()", name)
	case 1:
		return defs[0], nil
	}
	starts := make([]int, len(defs))
	for i, d := range defs {
		starts[i] = d.start
	}
	return span{}, atLines(ErrAnchorAmbiguous, fmt.Sprintf("%d definitions of %s(), at lines %%s", len(defs), name), starts...)
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (f lines) statementBefore(fn, stmt string) (int, error) {
	i, _, err := f.statement(fn, stmt)
	if err != nil {
		return 0, err
	}
	return f.commentAbove(i), nil
}

// statementAfter returns the line after the end of the statement (the line
// that ends it with ";").
func (f lines) statementAfter(fn, stmt string) (int, error) {
	i, sp, err := f.statement(fn, stmt)
	if err != nil {
		return 0, err
	}
	for i < sp.end-1 && !strings.HasSuffix(strings.TrimRight(f[i], " \t\n"), ";") {
		i++
	}
	return i + 1, nil
}

// statement finds the one line of function fn that starts with stmt (a
// call when stmt is a bare name).
func (f lines) statement(fn, stmt string) (int, span, error) {
	sp, err := f.function(fn)
	if err != nil {
		return 0, sp, err
	}
	prefix := stmt
	if identRE.MatchString(stmt) {
		prefix = stmt + "("
	}
	i, err := f.unique(func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), prefix) }, sp.start+1, sp.end)
	if err != nil {
		var ae *anchorErr
		if errors.As(err, &ae) && ae.err == ErrAnchorMissing {
			return 0, sp, missing("no statement starting with %q in %s()", prefix, fn)
		}
		return 0, sp, err
	}
	return i, sp, nil
}

func moveFunction(ed *Editor, f lines, e spec.Edit, fail func(error, string, ...any) error) error {
	files := ed.files
	name, dest, before, newName := e.Args[0], e.Args[1], e.Args[2], e.Args[3]
	sp, err := f.function(name)
	if err != nil {
		return fail(err, "")
	}
	start, end := f.commentAbove(sp.start), sp.end
	if end < len(f) && strings.TrimSpace(f[end]) == "" {
		end++
	}
	body := append(lines{}, f[start:end]...)
	if sp.end == end {
		body = append(body, "\n")
	}
	def := sp.start - start
	body[def] = strings.TrimPrefix(body[def], "static ")
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `\(`)
	for i := range body {
		body[i] = re.ReplaceAllString(body[i], "${1}"+newName+"(")
	}
	rest := append(append(lines{}, f[:start]...), f[end:]...)

	dd, err := files.Get(dest)
	if err != nil {
		return fail(noFile(err), "")
	}
	d := ed.lines(dest, dd)
	dsp, err := d.function(before)
	if err != nil {
		var ae *anchorErr
		if errors.As(err, &ae) {
			ae.path = dest
			return fail(ae, "in %s: ", dest)
		}
		return fail(err, "")
	}
	if dsp, err := d.function(newName); err == nil {
		return fail(&anchorErr{err: ErrAlreadyPresent, detail: fmt.Sprintf("%s() is already defined in %s at line %%s", newName, dest), lines: []int{dsp.start}, path: dest}, "")
	}
	files.Set(e.Path, rest.bytes())
	files.Set(dest, d.insert(d.commentAbove(dsp.start), body).bytes())
	return nil
}
