package hooks

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"kpatch/spec"
)

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
