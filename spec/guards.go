package spec

import (
	"errors"
	"strconv"
	"sync"
	"text/template"
	"text/template/parse"
)

// A spec template is a Go template, but the series' templates use a small
// part of the language: text, {{if}}/{{else}}/{{else if}}/{{end}} on
// guards built from since, before, between, and, or, not and comparisons
// of .Version with numbers, and {{created "id"}}. text/template runs them
// through reflection and needs a clone of the template for every render
// (the guard functions close over the revision and step); rendering every
// created file after every patch cost gen about a tenth of its time.
//
// A program is a template compiled for that part of the language: read by
// the guard parser (parseGuards), or compiled from the tree text/template
// parsed (compileProgram). A template that uses anything else (range,
// with, variables, pipelines, other functions) gets no program and is run
// by text/template, and so is a render the program cannot finish (a guard
// naming an unknown patch, a comparison of mixed types): text/template
// then reports the error in its own words. What a program writes is what
// text/template writes for the same template and data
// (TestProgramsRenderAsTextTemplate runs both on every template of the
// built-in series, at every patch of every revision).
type program struct {
	root []gnode
}

// gnode is a node of a compiled template.
type gnode struct {
	text   string   // written as is, when branch and action are nil
	branch *gbranch // {{if}}
	action *gexpr   // {{action}}: its value is written
}

// gbranch is {{if cond}} then {{else}} els {{end}}.
type gbranch struct {
	cond      *gexpr
	then, els []gnode
}

// gexpr is an expression: a call, a field of the data, or a constant.
type gexpr struct {
	fn    string   // the function called, "" for a field or a constant
	args  []*gexpr // its arguments
	field string   // Version, Step or Patch
	val   gvalue   // a constant (when fn and field are "")
}

// gvalue is a value the guard language computes with.
type gvalue struct {
	kind byte // 'b' bool, 'i' int, 's' string
	b    bool
	i    int64
	s    string
}

// truth is text/template's truth of a value.
func (v gvalue) truth() bool {
	switch v.kind {
	case 'b':
		return v.b
	case 'i':
		return v.i != 0
	}
	return v.s != ""
}

// errFallback stops a program: text/template renders instead.
var errFallback = errors.New("spec: not for the guard evaluator")

// lazyProgram returns a function that compiles t on its first call (a
// template that is never rendered is never compiled).
func lazyProgram(t *template.Template) func() *program {
	return sync.OnceValue(func() *program { return compileProgram(t) })
}

// program returns f's program, nil when text/template must render it.
func (f *File) program() *program {
	if f.tmpl == nil || f.tmpl.prog == nil {
		return nil
	}
	return f.tmpl.prog()
}

// walkExprs calls fn for every expression of nodes, each before its
// arguments, in the order text/template's tree holds them (an if's
// condition, then its nodes, then its else).
func walkExprs(nodes []gnode, fn func(*gexpr)) {
	var expr func(e *gexpr)
	expr = func(e *gexpr) {
		fn(e)
		for _, a := range e.args {
			expr(a)
		}
	}
	for i := range nodes {
		switch n := &nodes[i]; {
		case n.branch != nil:
			expr(n.branch.cond)
			walkExprs(n.branch.then, fn)
			walkExprs(n.branch.els, fn)
		case n.action != nil:
			expr(n.action)
		}
	}
}

// compileProgram compiles t, or returns nil when t uses anything outside
// the guard language.
func compileProgram(t *template.Template) *program {
	if t == nil || t.Tree == nil || t.Tree.Root == nil {
		return nil
	}
	root, ok := compileList(t.Tree.Root)
	if !ok {
		return nil
	}
	return &program{root: root}
}

func compileList(l *parse.ListNode) ([]gnode, bool) {
	if l == nil {
		return nil, true
	}
	var out []gnode
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			out = append(out, gnode{text: string(n.Text)})
		case *parse.CommentNode:
		case *parse.IfNode:
			cond, ok := compilePipe(n.Pipe)
			if !ok {
				return nil, false
			}
			then, ok := compileList(n.List)
			if !ok {
				return nil, false
			}
			els, ok := compileList(n.ElseList)
			if !ok {
				return nil, false
			}
			out = append(out, gnode{branch: &gbranch{cond: cond, then: then, els: els}})
		case *parse.ActionNode:
			e, ok := compilePipe(n.Pipe)
			if !ok {
				return nil, false
			}
			out = append(out, gnode{action: e})
		default:
			return nil, false
		}
	}
	return out, true
}

// compilePipe compiles a pipeline of one command without declarations.
func compilePipe(p *parse.PipeNode) (*gexpr, bool) {
	if p == nil || len(p.Decl) != 0 || len(p.Cmds) != 1 {
		return nil, false
	}
	args := p.Cmds[0].Args
	if len(args) == 0 {
		return nil, false
	}
	fn, ok := args[0].(*parse.IdentifierNode)
	if !ok {
		if len(args) != 1 {
			return nil, false
		}
		return compileArg(args[0])
	}
	if !guardFuncNames[fn.Ident] {
		return nil, false
	}
	e := &gexpr{fn: fn.Ident}
	for _, a := range args[1:] {
		c, ok := compileArg(a)
		if !ok {
			return nil, false
		}
		e.args = append(e.args, c)
	}
	return e, true
}

// compileArg compiles an argument: a constant, a field or a parenthesized
// pipeline.
func compileArg(n parse.Node) (*gexpr, bool) {
	switch n := n.(type) {
	case *parse.PipeNode:
		return compilePipe(n)
	case *parse.FieldNode:
		if len(n.Ident) != 1 {
			return nil, false
		}
		switch n.Ident[0] {
		case "Version", "Step", "Patch":
			return &gexpr{field: n.Ident[0]}, true
		}
	case *parse.NumberNode:
		if n.IsInt {
			return &gexpr{val: gvalue{kind: 'i', i: n.Int64}}, true
		}
	case *parse.StringNode:
		return &gexpr{val: gvalue{kind: 's', s: n.Text}}, true
	case *parse.BoolNode:
		return &gexpr{val: gvalue{kind: 'b', b: n.True}}, true
	}
	return nil, false
}

// guardFuncs are the spec's functions as a program calls them.
type guardFuncs struct {
	applied func(id string) (bool, error) // since
	created func(id string) error
}

// templateFuncs returns the same functions for text/template: created,
// since, before and between, as the spec's templates call them.
func (fns guardFuncs) templateFuncs() map[string]any {
	return map[string]any{
		"created": func(id string) (string, error) { return "", fns.created(id) },
		"since":   fns.applied,
		"before": func(id string) (bool, error) {
			ok, err := fns.applied(id)
			return !ok, err
		},
		"between": func(a, b string) (bool, error) {
			okA, err := fns.applied(a)
			if err != nil {
				return false, err
			}
			okB, err := fns.applied(b)
			return okA && !okB, err
		},
	}
}

// run renders the program for data; an error means text/template must
// render it. The text is gathered in pieces first and copied once into
// memory of its exact size.
func (p *program) run(d RenderData, fns guardFuncs) ([]byte, error) {
	pieces, err := runNodes(make([]string, 0, 64), p.root, d, fns)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, s := range pieces {
		n += len(s)
	}
	out := make([]byte, 0, n)
	for _, s := range pieces {
		out = append(out, s...)
	}
	return out, nil
}

func runNodes(out []string, nodes []gnode, d RenderData, fns guardFuncs) ([]string, error) {
	for i := range nodes {
		n := &nodes[i]
		switch {
		case n.branch != nil:
			v, err := n.branch.cond.eval(d, fns)
			if err != nil {
				return nil, err
			}
			branch := n.branch.els
			if v.truth() {
				branch = n.branch.then
			}
			if out, err = runNodes(out, branch, d, fns); err != nil {
				return nil, err
			}
		case n.action != nil:
			v, err := n.action.eval(d, fns)
			if err != nil {
				return nil, err
			}
			switch v.kind {
			case 'b':
				out = append(out, strconv.FormatBool(v.b))
			case 'i':
				out = append(out, strconv.FormatInt(v.i, 10))
			default:
				out = append(out, v.s)
			}
		default:
			out = append(out, n.text)
		}
	}
	return out, nil
}

// eval computes e as text/template would.
func (e *gexpr) eval(d RenderData, fns guardFuncs) (gvalue, error) {
	switch {
	case e.field != "":
		switch e.field {
		case "Version":
			return gvalue{kind: 'i', i: int64(d.Version)}, nil
		case "Step":
			return gvalue{kind: 'i', i: int64(d.Step)}, nil
		}
		return gvalue{kind: 's', s: d.Patch}, nil
	case e.fn == "":
		return e.val, nil
	}
	switch e.fn {
	case "and", "or":
		// Both stop at the first argument that decides, as text/template's do
		// (its later arguments are not evaluated).
		if len(e.args) == 0 {
			return gvalue{}, errFallback
		}
		var v gvalue
		for _, a := range e.args {
			var err error
			if v, err = a.eval(d, fns); err != nil {
				return gvalue{}, err
			}
			if v.truth() == (e.fn == "or") {
				return v, nil
			}
		}
		return v, nil
	case "not":
		if len(e.args) != 1 {
			return gvalue{}, errFallback
		}
		v, err := e.args[0].eval(d, fns)
		if err != nil {
			return gvalue{}, err
		}
		return gvalue{kind: 'b', b: !v.truth()}, nil
	}
	args := make([]gvalue, len(e.args))
	for i, a := range e.args {
		v, err := a.eval(d, fns)
		if err != nil {
			return gvalue{}, err
		}
		args[i] = v
	}
	// applied says whether the patch argument i names is applied; any
	// failure (not a string, an unknown id) leaves the render to
	// text/template.
	applied := func(i int) (bool, error) {
		if args[i].kind != 's' {
			return false, errFallback
		}
		ok, err := fns.applied(args[i].s)
		if err != nil {
			return false, errFallback
		}
		return ok, nil
	}
	switch e.fn {
	case "since", "before":
		if len(args) != 1 {
			return gvalue{}, errFallback
		}
		ok, err := applied(0)
		if err != nil {
			return gvalue{}, err
		}
		return gvalue{kind: 'b', b: ok == (e.fn == "since")}, nil
	case "between":
		if len(args) != 2 {
			return gvalue{}, errFallback
		}
		okA, err := applied(0)
		if err != nil {
			return gvalue{}, err
		}
		okB, err := applied(1)
		if err != nil {
			return gvalue{}, err
		}
		return gvalue{kind: 'b', b: okA && !okB}, nil
	case "created":
		if len(args) != 1 || args[0].kind != 's' || fns.created(args[0].s) != nil {
			return gvalue{}, errFallback
		}
		return gvalue{kind: 's'}, nil
	case "eq":
		// eq a b c is a == b || a == c.
		if len(args) < 2 {
			return gvalue{}, errFallback
		}
		for _, b := range args[1:] {
			if args[0].kind != b.kind {
				return gvalue{}, errFallback
			}
			if args[0] == b {
				return gvalue{kind: 'b', b: true}, nil
			}
		}
		return gvalue{kind: 'b'}, nil
	}
	// ne, lt, le, gt, ge: two ints, or two strings.
	if len(args) != 2 || args[0].kind != args[1].kind || args[0].kind == 'b' && e.fn != "ne" {
		return gvalue{}, errFallback
	}
	a, b := args[0], args[1]
	var c int // -1, 0, 1
	switch {
	case a.kind == 'b':
		if a.b != b.b {
			c = 1
		}
	case a.kind == 'i' && a.i < b.i, a.kind == 's' && a.s < b.s:
		c = -1
	case a.kind == 'i' && a.i > b.i, a.kind == 's' && a.s > b.s:
		c = 1
	}
	var r bool
	switch e.fn {
	case "ne":
		r = c != 0
	case "lt":
		r = c < 0
	case "le":
		r = c <= 0
	case "gt":
		r = c > 0
	case "ge":
		r = c >= 0
	}
	return gvalue{kind: 'b', b: r}, nil
}
