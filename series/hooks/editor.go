package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"kpatch/spec"
)

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
