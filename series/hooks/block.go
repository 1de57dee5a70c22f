package hooks

import (
	"errors"
	"fmt"
	"strings"

	"kpatch/spec"
)

// anchorBlock is the kind of the operations that attach to lines of code
// as the tree has them (replace-block, insert-before-block, substitute):
// what they change is itself the anchor, found once in a function or in
// the file.
const anchorBlock = anchorGuard + 1

// wholeFile is the scope argument that means the whole file, not one
// function.
const wholeFile = "-"

func init() {
	Ops["replace-block"] = Op{[]string{"SCOPE", "LINES"},
		"the text in place of LINES (whole lines, \\n between them; no text removes them), found once in function SCOPE or, for -, in the file",
		anchorBlock, nil, func(ed *Editor, f lines, _ []byte, e spec.Edit, fail failFunc) error {
			return replaceBlock(ed, f, e, fail, false)
		}}
	Ops["stable-replace-block"] = Op{[]string{"SCOPE", "LINES"},
		"as replace-block, for a fix that stable trees carry: a base that has the text in place of LINES already is left as it is",
		anchorBlock, nil, func(ed *Editor, f lines, _ []byte, e spec.Edit, fail failFunc) error {
			return replaceBlock(ed, f, e, fail, true)
		}}
	Ops["replace-range"] = Op{[]string{"SCOPE", "FIRST", "LAST"},
		"the text in place of the lines from the one line FIRST to the first line LAST after it, in function SCOPE or, for -, in the file (no text removes them, and a blank line after them when one is above)",
		anchorBlock, nil, replaceRange}
	Ops["insert-before-block"] = Op{[]string{"SCOPE", "LINES"},
		"text before LINES (whole lines, \\n between them), found once in function SCOPE or, for -, in the file",
		anchorBlock, nil, insertBeforeBlock}
	Ops["substitute"] = Op{[]string{"SCOPE", "OLD", "NEW"},
		"NEW in place of the text OLD, found once in function SCOPE or, for -, in the file (no text: the lines keep their indentation)",
		anchorBlock, nil, substitute}
}

// scope returns the lines [from, to) of f that scope names: a function's
// definition, or the whole file for "-".
func (f lines) scope(name string) (int, int, error) {
	if name == wholeFile {
		return 0, len(f), nil
	}
	sp, err := f.function(name)
	return sp.start, sp.end, err
}

// findBlock returns the first line of the one place in [from, to) where
// the lines of block follow each other, whole.
func (f lines) findBlock(block lines, from, to int) (int, error) {
	var hits []int
	for i := from; i+len(block) <= to; i++ {
		ok := true
		for j, b := range block {
			if strings.TrimSuffix(f[i+j], "\n") != strings.TrimSuffix(b, "\n") {
				ok = false
				break
			}
		}
		if ok {
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

// blockIn finds e's LINES (Args[1]) in its scope (Args[0]).
func blockIn(f lines, e spec.Edit) (at int, block lines, from, to int, err error) {
	from, to, err = f.scope(e.Args[0])
	if err != nil {
		return 0, nil, 0, 0, err
	}
	if e.Args[1] == "" {
		return 0, nil, 0, 0, errors.New("LINES is empty")
	}
	block = splitString(e.Args[1] + "\n")
	at, err = f.findBlock(block, from, to)
	if err != nil {
		var ae *anchorErr
		if errors.As(err, &ae) && ae.err == ErrAnchorMissing {
			where := "the file"
			if e.Args[0] != wholeFile {
				where = e.Args[0] + "()"
			}
			err = missing("%d line(s) starting with %q are not in %s", len(block), strings.TrimSpace(block[0]), where)
		}
	}
	return at, block, from, to, err
}

// replaceBlock puts e's text in place of its LINES. When the text is
// already where LINES would be and LINES are gone, the edit is already
// present (ErrAlreadyPresent). With stable, a base may carry the fix: when
// the scope holds the text already, the file is left as it is.
func replaceBlock(ed *Editor, f lines, e spec.Edit, fail failFunc, stable bool) error {
	if text := splitString(e.Text); stable && len(text) > 0 {
		// The base carries the fix: the text is there, whether or not
		// it holds LINES too.
		if from, to, err := f.scope(e.Args[0]); err == nil {
			if _, err := f.findBlock(text, from, to); err == nil {
				return nil
			}
		}
	}
	at, block, from, to, err := blockIn(f, e)
	if err != nil {
		if isMissing(err) {
			if text := splitString(e.Text); len(text) > 0 {
				if i, terr := f.findBlock(text, from, to); terr == nil {
					if stable {
						return nil
					}
					return fail(atLines(ErrAlreadyPresent, "the text is at line %s", i), "")
				}
			}
		}
		return fail(err, "")
	}
	out := append(append(append(lines{}, f[:at]...), splitString(e.Text)...), f[at+len(block):]...)
	ed.files.Set(e.Path, out.bytes())
	return nil
}

// replaceRange puts e's text in place of the lines from FIRST to LAST.
func replaceRange(ed *Editor, f lines, _ []byte, e spec.Edit, fail failFunc) error {
	from, to, err := f.scope(e.Args[0])
	if err != nil {
		return fail(err, "")
	}
	first, last := e.Args[1], e.Args[2]
	start, err := f.unique(func(l string) bool { return strings.TrimSuffix(l, "\n") == first }, from, to)
	if err != nil {
		if isMissing(err) {
			err = missing("no line %q", first)
		}
		return fail(err, "")
	}
	end := start
	for end < to && strings.TrimSuffix(f[end], "\n") != last {
		end++
	}
	if end == to {
		return fail(missing("no line %q after line %d", last, start+1), "")
	}
	end++
	if e.Text == "" && start > 0 && end < len(f) && strings.TrimSpace(f[start-1]) == "" && strings.TrimSpace(f[end]) == "" {
		end++ // one blank line stays between what was around the lines
	}
	out := append(append(append(lines{}, f[:start]...), splitString(e.Text)...), f[end:]...)
	ed.files.Set(e.Path, out.bytes())
	return nil
}

// isMissing reports whether err is an anchorErr for a missing anchor.
func isMissing(err error) bool {
	var ae *anchorErr
	return errors.As(err, &ae) && ae.err == ErrAnchorMissing
}

// insertBeforeBlock puts e's text before its LINES.
func insertBeforeBlock(ed *Editor, f lines, _ []byte, e spec.Edit, fail failFunc) error {
	at, _, _, _, err := blockIn(f, e)
	if err != nil {
		return fail(err, "")
	}
	text := splitString(e.Text)
	if len(text) == 0 {
		return fail(errors.New("the edit has no text to insert"), "")
	}
	if at >= len(text) {
		if i, err := f.findBlock(text, at-len(text), at); err == nil {
			return fail(atLines(ErrAlreadyPresent, "the text is at line %s", i), "")
		}
	}
	ed.files.Set(e.Path, f.insert(at, text).bytes())
	return nil
}

// substitute replaces the one occurrence of OLD in the scope by NEW.
func substitute(ed *Editor, f lines, _ []byte, e spec.Edit, fail failFunc) error {
	from, to, err := f.scope(e.Args[0])
	if err != nil {
		return fail(err, "")
	}
	old, repl := e.Args[1], e.Args[2]
	if old == "" || e.Text != "" {
		return fail(errors.New("substitute takes OLD and NEW, and no text"), "")
	}
	var hits []int
	n := 0
	for i := from; i < to; i++ {
		if c := strings.Count(f[i], old); c > 0 {
			hits = append(hits, i)
			n += c
		}
	}
	switch {
	case n == 0:
		for i := from; i < to; i++ {
			if strings.Contains(f[i], repl) {
				return fail(atLines(ErrAlreadyPresent, fmt.Sprintf("%q is at line %%s", repl), i), "")
			}
		}
		return fail(missing("no %q", old), "")
	case n > 1:
		return fail(atLines(ErrAnchorAmbiguous, "lines %s", hits...), "")
	}
	out := append(lines{}, f...)
	out[hits[0]] = strings.Replace(out[hits[0]], old, repl, 1)
	ed.files.Set(e.Path, out.bytes())
	return nil
}

// Stable reports whether op is an operation for a fix that stable trees
// carry, which leaves a base that has the fix as it is: a patch made of
// such edits changes nothing on that base.
func Stable(op string) bool { return op == "stable-replace-block" }
