package verify

import (
	"reflect"
	"sort"
	"strings"

	"modernc.org/cc/v4"
)

// Reading cc/v4's AST of a unit: definitions, declarations, parameters,
// calls, identifiers and macros.

var tokenType = reflect.TypeOf(cc.Token{})

// walk calls f with every node below n (n included; f returns false to
// skip a node's children) and tok with every token.
func walk(n cc.Node, f func(cc.Node) bool, tok func(cc.Token)) {
	walkValue(reflect.ValueOf(n), f, tok)
}

func walkValue(v reflect.Value, f func(cc.Node) bool, tok func(cc.Token)) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
	}
	if v.Kind() == reflect.Interface {
		walkValue(v.Elem(), f, tok)
		return
	}
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	if n, ok := v.Interface().(cc.Node); ok && f != nil && !f(n) {
		return
	}
	e := v.Elem()
	t := e.Type()
	for i := 0; i < t.NumField(); i++ {
		fl := t.Field(i)
		if !fl.IsExported() {
			continue
		}
		switch {
		case fl.Type == tokenType:
			if tok != nil {
				tok(e.Field(i).Interface().(cc.Token))
			}
		case fl.Type.Kind() == reflect.Pointer || fl.Type.Kind() == reflect.Interface:
			walkValue(e.Field(i), f, tok)
		}
	}
}

// collect reads the function definitions and function-like macros of the
// unit's file from ast.
func (u *cUnit) collect(ast *cc.AST) {
	for l := ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed != nil && ed.Case == cc.ExternalDeclarationDecl && ed.Declaration != nil {
			u.declaration(ed.Declaration)
		}
		if ed == nil || ed.Case != cc.ExternalDeclarationFuncDef || ed.FunctionDefinition == nil {
			continue
		}
		fd := ed.FunctionDefinition
		if fd.Declarator == nil || fd.CompoundStatement == nil || fd.Declarator.Position().Filename != u.path {
			continue
		}
		fn := &cFunc{name: fd.Declarator.Name(), line: fd.Declarator.Position().Line, start: fd.Position().Line,
			open: fd.CompoundStatement.Token.Position().Line, end: fd.CompoundStatement.Token2.Position().Line,
			unitPath: u.path, unitText: u.text}
		walk(fd.DeclarationSpecifiers, func(n cc.Node) bool {
			switch x := n.(type) {
			case *cc.StorageClassSpecifier:
				fn.static = fn.static || x.Case == cc.StorageClassSpecifierStatic
			case *cc.FunctionSpecifier:
				fn.inline = fn.inline || x.Case == cc.FunctionSpecifierInline
			case *cc.AttributeSpecifier:
				walk(x, nil, func(t cc.Token) {
					switch t.SrcStr() {
					case "__always_inline__", "always_inline":
						fn.alwaysInline = true
					case `".noinstr.text"`:
						fn.noinstr = true
					}
				})
				return false
			}
			return true
		}, nil)
		walk(fd.Declarator, func(n cc.Node) bool {
			pd, ok := n.(*cc.ParameterDeclaration)
			if !ok {
				return true
			}
			var p cParam
			if pd.Declarator != nil {
				p.name = pd.Declarator.Name()
			}
			var toks []cc.Token
			walk(pd, nil, func(t cc.Token) {
				if t.Ch != 0 && t.SrcStr() != "" {
					toks = append(toks, t)
				}
			})
			sort.Slice(toks, func(i, j int) bool { return toks[i].Seq() < toks[j].Seq() })
			var parts []string
			for _, t := range toks {
				if s := t.SrcStr(); s != p.name {
					parts = append(parts, s)
				}
			}
			p.typ = strings.Join(parts, " ")
			fn.params = append(fn.params, p)
			return false
		}, nil)
		if len(fn.params) == 1 && fn.params[0].name == "" && fn.params[0].typ == "void" {
			fn.params = nil // (void)
		}
		walk(fd.CompoundStatement, func(n cc.Node) bool {
			switch x := n.(type) {
			case *cc.PostfixExpression:
				if x.Case != cc.PostfixExpressionCall {
					break
				}
				if pe, ok := x.PostfixExpression.(*cc.PrimaryExpression); ok && pe.Case == cc.PrimaryExpressionIdent {
					if r, ok := u.ref(pe.Token); ok {
						fn.calls = append(fn.calls, r)
					}
				}
			case *cc.PrimaryExpression:
				if x.Case == cc.PrimaryExpressionIdent {
					if r, ok := u.ref(x.Token); ok {
						fn.idents = append(fn.idents, r)
					}
				}
			}
			return true
		}, nil)
		byPos := func(rs []cRef) {
			sort.SliceStable(rs, func(i, j int) bool {
				return rs[i].line < rs[j].line || rs[i].line == rs[j].line && rs[i].col < rs[j].col
			})
		}
		byPos(fn.calls)
		byPos(fn.idents)
		for _, r := range fn.calls {
			if r.name == "instrumentation_end" {
				fn.instrEnd = append(fn.instrEnd, r.line)
			}
		}
		u.funcs = append(u.funcs, fn)
	}
	for name, m := range ast.Macros {
		if !m.IsFnLike || m.Name.Position().Filename != u.path {
			continue
		}
		cm := cMacro{name: name, line: m.Name.Position().Line}
		for _, t := range m.ReplacementList() {
			if t.Ch == rune(cc.IDENTIFIER) {
				cm.idents = append(cm.idents, t.SrcStr())
			}
		}
		u.macros = append(u.macros, cm)
	}
	sort.Slice(u.macros, func(i, j int) bool { return u.macros[i].line < u.macros[j].line })
	sort.Slice(u.funcs, func(i, j int) bool { return u.funcs[i].line < u.funcs[j].line })
}

// declaration records the function declarations of d that are in the
// unit's file, and the identifiers its initializers use.
func (u *cUnit) declaration(d *cc.Declaration) {
	static, typedef := false, false
	walk(d.DeclarationSpecifiers, func(n cc.Node) bool {
		if x, ok := n.(*cc.StorageClassSpecifier); ok {
			static = static || x.Case == cc.StorageClassSpecifierStatic
			typedef = typedef || x.Case == cc.StorageClassSpecifierTypedef
		}
		return true
	}, nil)
	for il := d.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
		id := il.InitDeclarator
		if id == nil || id.Declarator == nil {
			continue
		}
		if dd := id.Declarator.DirectDeclarator; dd != nil && (dd.Case == cc.DirectDeclaratorFuncParam || dd.Case == cc.DirectDeclaratorFuncIdent) &&
			dd.DirectDeclarator != nil && dd.DirectDeclarator.Case == cc.DirectDeclaratorIdent {
			if p := id.Declarator.Position(); p.Filename == u.path {
				u.decls = append(u.decls, cDecl{name: id.Declarator.Name(), line: p.Line, static: static})
			}
		} else if dd != nil && !typedef && (dd.Case == cc.DirectDeclaratorIdent || dd.Case == cc.DirectDeclaratorArr) {
			if p := id.Declarator.Position(); p.Filename == u.path {
				u.vars = append(u.vars, cDecl{name: id.Declarator.Name(), line: p.Line, static: static})
			}
		}
		if id.Initializer != nil {
			walk(id.Initializer, func(n cc.Node) bool {
				if x, ok := n.(*cc.PrimaryExpression); ok && x.Case == cc.PrimaryExpressionIdent {
					if r, ok := u.ref(x.Token); ok {
						u.uses = append(u.uses, r)
					}
				}
				return true
			}, nil)
		}
	}
}

// ref turns an identifier token into a cRef when it is in the unit's file.
func (u *cUnit) ref(t cc.Token) (cRef, bool) {
	p := t.Position()
	if p.Filename != u.path {
		return cRef{}, false
	}
	return cRef{name: t.SrcStr(), line: p.Line, col: p.Column}, true
}
