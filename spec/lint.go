package spec

import (
	"fmt"
	"text/template"
	"text/template/parse"
)

// lint checks every guard of the templates and patch declarations against
// the spec: a comparison of .Version must name a revision the spec has, and
// since, before, between and created must name a patch some revision has.
// A guard that names nothing would silently always or never hold.
func (s *Spec) lint(decls map[string]*decl) error {
	versions := map[int]bool{}
	for _, r := range s.Revisions {
		versions[r.Version] = true
	}
	checkTree := func(t *template.Template) error {
		var err error
		walk(t.Tree.Root, func(c *parse.CommandNode) {
			if err != nil || len(c.Args) == 0 {
				return
			}
			fn, ok := c.Args[0].(*parse.IdentifierNode)
			if !ok {
				return
			}
			// ErrorContext counts lines up to the node: only on an error.
			where := func() string { w, _ := t.Tree.ErrorContext(c); return w }
			switch fn.Ident {
			case "lt", "le", "gt", "ge", "eq", "ne":
				if len(c.Args) != 3 || !isVersion(c.Args[1]) && !isVersion(c.Args[2]) {
					return
				}
				for _, a := range c.Args[1:] {
					if n, ok := a.(*parse.NumberNode); ok && n.IsInt && !versions[int(n.Int64)] {
						err = fmt.Errorf("%s: the guard %q names v%d, which the series has no folder for: name a revision it has", where(), c.String(), n.Int64)
					}
				}
			case "since", "before", "between", "created":
				for _, a := range c.Args[1:] {
					if id, ok := a.(*parse.StringNode); ok && !s.knownID(id.Text) {
						err = fmt.Errorf("%s: unknown patch id %q: no revision's order lists it", where(), id.Text)
					}
				}
			}
		})
		return err
	}
	for _, path := range s.CreatedFiles() {
		if err := checkTree(s.Templates[path].tmpl); err != nil {
			return err
		}
	}
	for _, f := range s.Facts {
		if err := checkTree(f.tmpl); err != nil {
			return err
		}
	}
	for _, d := range decls {
		if !s.knownID(d.id) {
			return fmt.Errorf("%s: no revision's order lists patch %q: add it to one or remove the file", d.src, d.id)
		}
		if err := checkTree(d.tmpl); err != nil {
			return err
		}
	}
	return nil
}

func isVersion(n parse.Node) bool {
	f, ok := n.(*parse.FieldNode)
	return ok && len(f.Ident) == 1 && f.Ident[0] == "Version"
}

// walk calls fn for every command of the tree, those of pipelines inside
// commands included.
func walk(n parse.Node, fn func(*parse.CommandNode)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, fn)
		}
	case *parse.ActionNode:
		walk(n.Pipe, fn)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walk(c, fn)
		}
	case *parse.CommandNode:
		fn(n)
		for _, a := range n.Args {
			walk(a, fn)
		}
	case *parse.IfNode:
		walk(n.Pipe, fn)
		walk(n.List, fn)
		walk(n.ElseList, fn)
	case *parse.RangeNode:
		walk(n.Pipe, fn)
		walk(n.List, fn)
		walk(n.ElseList, fn)
	case *parse.WithNode:
		walk(n.Pipe, fn)
		walk(n.List, fn)
		walk(n.ElseList, fn)
	case *parse.TemplateNode:
		walk(n.Pipe, fn)
	}
}
