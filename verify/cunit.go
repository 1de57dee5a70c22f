package verify

import (
	"strings"
)

// This file is the layer the rules on function bodies read C through: one
// file of the series at one patch, preprocessed and parsed by cc/v4 (the
// series' own headers served with their declarations, every other header
// empty, the prelude standing in for the rest of the kernel), for one
// build (ABI and options). Positions are the file's real lines, so
// findings carry file:line of the tree at that patch. Here: what a unit
// holds; cfront.go is how the rules ask for units, cunit_input.go chooses what a
// unit reads and caches it, cchunk.go cuts C files lexically,
// cunit_parse.go parses with cc/v4, cunit_ast.go reads the AST,
// cunit_prelude.go stands in for the kernel headers.

// cUnit is one C file of the series at one patch, parsed by cc/v4.
type cUnit struct {
	path   string
	text   []byte // what was read: the file, or a hunk's lines at their line numbers
	funcs  []*cFunc
	decls  []cDecl // function declarations (prototypes) at file scope
	vars   []cDecl // object declarations and definitions at file scope
	uses   []cRef  // identifiers used in file-scope declarations (initializers)
	macros []cMacro
	failed []cFailure // definitions cc/v4 could not parse (left out)
	err    error      // the file could not be parsed at all
}

// cFunc is a function definition of a cUnit.
type cFunc struct {
	name                         string
	static, inline, alwaysInline bool
	noinstr                      bool // in .noinstr.text
	line                         int  // the line of the name
	start, open, end             int  // the first line, the "{" line, the "}" line
	params                       []cParam
	calls, idents                []cRef // in the body, in source order
	instrEnd                     []int  // lines of instrumentation_end() calls
	unitPath                     string
	unitText                     []byte
}

// cDecl is a function declaration (or, in cUnit.vars, an object) at file
// scope.
type cDecl struct {
	name   string
	line   int
	static bool
}

// cParam is a parameter: its name and its type as written (tokens joined
// by one space, "struct task_struct *").
type cParam struct{ name, typ string }

// cRef is a use of an identifier (or a call of it) in a body.
type cRef struct {
	name      string
	line, col int
}

// cMacro is a function-like macro the file #defines.
type cMacro struct {
	name   string
	line   int
	idents []string // identifiers of its replacement list
}

// cFailure is a definition cc/v4 could not parse.
type cFailure struct {
	fn    bool   // a function definition
	name  string // the function's name, when fn
	start int    // its first line
	line  int    // the line cc/v4 stopped at
	msg   string
}

// body returns the lines of f's body, "{" to "}".
func (f *cFunc) body() []Line {
	lines := strings.Split(string(f.unitText), "\n")
	var out []Line
	for i := f.open; i <= f.end && i <= len(lines); i++ {
		out = append(out, Line{i, lines[i-1]})
	}
	return out
}

// param returns f's first parameter whose type is typ (spaces ignored).
func (f *cFunc) param(typ string) (cParam, bool) {
	want := strings.Join(strings.Fields(typ), "")
	for _, p := range f.params {
		t := strings.Join(strings.Fields(strings.TrimPrefix(p.typ, "const ")), "")
		if t == want && p.name != "" {
			return p, true
		}
	}
	return cParam{}, false
}

// instrumented reports whether a call at line, col of f's body runs with
// instrumentation allowed: in a noinstr function only between
// instrumentation_begin() and instrumentation_end(), in any other function
// everywhere but after an instrumentation_end() that no
// instrumentation_begin() follows.
func (f *cFunc) instrumented(line, col int) bool {
	if !f.noinstr && len(f.instrEnd) == 0 {
		return true
	}
	state := !f.noinstr
	for _, r := range f.calls {
		if r.line > line || r.line == line && r.col >= col {
			break
		}
		switch r.name {
		case "instrumentation_begin":
			state = true
		case "instrumentation_end":
			state = false
		}
	}
	return state
}
