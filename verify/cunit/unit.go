package cunit

import (
	"strings"
)

// Unit is one C file of the series at one patch, parsed by cc/v4.
type Unit struct {
	Path  string
	Text  []byte  // what was read: the file, or a hunk's lines at their line numbers
	Funcs []*Func // function definitions, by line
	Decls []Decl  // function declarations (prototypes) at file scope
	Vars  []Decl  // object declarations and definitions at file scope
	Uses  []Ref   // identifiers used in file-scope declarations (initializers)
	// Refs are the identifiers the file's code uses as the compiler sees
	// it, in every definition and initializer cc/v4 read, macros expanded
	// (a name a macro pastes together, such as DEVICE_ATTR_RW(x)'s
	// x_show, at the line of the macro's invocation). Of a file the
	// series edits, Funcs, Decls, Vars and Uses hold what the series
	// touches; Refs hold what the whole unit read.
	Refs []Ref
	// Expanded says the unit was read from the preprocessed translation
	// unit of a build tree (every macro expanded as the compiler expands
	// it), not with the prelude.
	Expanded bool
	Macros   []Macro   // the function-like macros the file defines
	Failed   []Failure // definitions cc/v4 could not parse (left out)
	Err      error     // the file could not be parsed at all
}

// Func is a function definition of a Unit.
type Func struct {
	Name                         string
	Static, Inline, AlwaysInline bool
	Noinstr                      bool // in .noinstr.text
	Line                         int  // the line of the name
	Start, Open, End             int  // the first line, the "{" line, the "}" line
	Params                       []Param
	Calls, Idents                []Ref // in the body, in source order
	InstrEnd                     []int // lines of instrumentation_end() calls
	// Locals are the objects the body declares that are neither pointers,
	// arrays nor functions, each with its declaration's specifiers.
	Locals []Param
	// Compares are the body's comparisons of an identifier with an
	// integer constant.
	Compares []Compare
	UnitPath string
	UnitText []byte
}

// Decl is a function declaration (or, in Unit.Vars, an object) at file
// scope.
type Decl struct {
	Name   string
	Line   int
	Static bool
	// Const says the object itself is const (const int x, const char
	// s[]; not const char *p), whose being unused gcc reports only with
	// -Wunused-const-variable, which W=1 enables.
	Const bool
}

// Param is a parameter: its name and its type as written (tokens joined
// by one space, "struct task_struct *").
type Param struct{ Name, Type string }

// Compare is a comparison of an identifier with an integer constant, the
// identifier on the left ("x < 0"; "0 > x" is recorded so), at the line and
// column of its operator.
type Compare struct {
	Name, Op, Const string
	Line, Col       int
	// Type is the type the declaration of Name in scope at the
	// comparison gives it, as cc/v4's scopes resolve the name (a
	// parameter, or a local of this or an enclosing block, with its
	// declaration's specifiers); "" when that declaration is no integer
	// object of the function (a global, a pointer, an array).
	Type string
}

// Ref is a use of an identifier (or a call of it) in a body.
type Ref struct {
	Name      string
	Line, Col int
}

// Macro is a function-like macro the file #defines.
type Macro struct {
	Name   string
	Line   int
	Idents []string // identifiers of its replacement list
}

// Failure is a definition cc/v4 could not parse.
type Failure struct {
	Fn    bool   // a function definition
	Name  string // the function's name, when Fn
	Start int    // its first line
	Line  int    // the line cc/v4 stopped at
	Msg   string
}

// Body returns the lines of f's body, "{" to "}".
func (f *Func) Body() []Line {
	lines := strings.Split(string(f.UnitText), "\n")
	var out []Line
	for i := f.Open; i <= f.End && i <= len(lines); i++ {
		out = append(out, Line{i, lines[i-1]})
	}
	return out
}

// Param returns f's first parameter whose type is typ (spaces ignored).
func (f *Func) Param(typ string) (Param, bool) {
	want := strings.Join(strings.Fields(typ), "")
	for _, p := range f.Params {
		t := strings.Join(strings.Fields(strings.TrimPrefix(p.Type, "const ")), "")
		if t == want && p.Name != "" {
			return p, true
		}
	}
	return Param{}, false
}

// Instrumented reports whether a call at line, col of f's body runs with
// instrumentation allowed: in a noinstr function only between
// instrumentation_begin() and instrumentation_end(), in any other function
// everywhere but after an instrumentation_end() that no
// instrumentation_begin() follows.
func (f *Func) Instrumented(line, col int) bool {
	if !f.Noinstr && len(f.InstrEnd) == 0 {
		return true
	}
	state := !f.Noinstr
	for _, r := range f.Calls {
		if r.Line > line || r.Line == line && r.Col >= col {
			break
		}
		switch r.Name {
		case "instrumentation_begin":
			state = true
		case "instrumentation_end":
			state = false
		}
	}
	return state
}
