package cunit

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
func (u *Unit) collect(ast *cc.AST) {
	for l := ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed != nil && ed.Case == cc.ExternalDeclarationDecl && ed.Declaration != nil {
			u.declaration(ed.Declaration)
		}
		if ed == nil || ed.Case != cc.ExternalDeclarationFuncDef || ed.FunctionDefinition == nil {
			continue
		}
		fd := ed.FunctionDefinition
		if fd.Declarator == nil || fd.CompoundStatement == nil || fd.Declarator.Position().Filename != u.Path {
			continue
		}
		fn := &Func{Name: fd.Declarator.Name(), Line: fd.Declarator.Position().Line, Start: fd.Position().Line,
			Open: fd.CompoundStatement.Token.Position().Line, End: fd.CompoundStatement.Token2.Position().Line,
			UnitPath: u.Path, UnitText: u.Text}
		walk(fd.DeclarationSpecifiers, func(n cc.Node) bool {
			switch x := n.(type) {
			case *cc.StorageClassSpecifier:
				fn.Static = fn.Static || x.Case == cc.StorageClassSpecifierStatic
			case *cc.FunctionSpecifier:
				fn.Inline = fn.Inline || x.Case == cc.FunctionSpecifierInline
			case *cc.AttributeSpecifier:
				walk(x, nil, func(t cc.Token) {
					switch t.SrcStr() {
					case "__always_inline__", "always_inline":
						fn.AlwaysInline = true
					case `".noinstr.text"`:
						fn.Noinstr = true
					}
				})
				return false
			}
			return true
		}, nil)
		declTypes := map[*cc.Declarator]string{} // the function's integer objects
		var resolved []*cc.Declarator            // what each of fn.Compares names
		walk(fd.Declarator, func(n cc.Node) bool {
			pd, ok := n.(*cc.ParameterDeclaration)
			if !ok {
				return true
			}
			var p Param
			if pd.Declarator != nil {
				p.Name = pd.Declarator.Name()
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
				if s := t.SrcStr(); s != p.Name {
					parts = append(parts, s)
				}
			}
			p.Type = strings.Join(parts, " ")
			fn.Params = append(fn.Params, p)
			if pd.Declarator != nil && pd.Declarator.Pointer == nil {
				if dd := pd.Declarator.DirectDeclarator; dd != nil && dd.Case == cc.DirectDeclaratorIdent {
					declTypes[pd.Declarator] = p.Type
				}
			}
			return false
		}, nil)
		if len(fn.Params) == 1 && fn.Params[0].Name == "" && fn.Params[0].Type == "void" {
			fn.Params = nil // (void)
		}
		walk(fd.CompoundStatement, func(n cc.Node) bool {
			switch x := n.(type) {
			case *cc.Declaration:
				fn.Locals = append(fn.Locals, u.locals(x, declTypes)...)
			case *cc.RelationalExpression:
				if x.Case != cc.RelationalExpressionShift {
					u.compare(fn, &resolved, x.Token, x.RelationalExpression, x.ShiftExpression)
				}
			case *cc.EqualityExpression:
				if x.Case != cc.EqualityExpressionRel {
					u.compare(fn, &resolved, x.Token, x.EqualityExpression, x.RelationalExpression)
				}
			case *cc.PostfixExpression:
				if x.Case != cc.PostfixExpressionCall {
					break
				}
				if pe, ok := x.PostfixExpression.(*cc.PrimaryExpression); ok && pe.Case == cc.PrimaryExpressionIdent {
					if r, ok := u.ref(pe.Token); ok {
						fn.Calls = append(fn.Calls, r)
					}
				}
			case *cc.PrimaryExpression:
				if x.Case == cc.PrimaryExpressionIdent {
					if r, ok := u.ref(x.Token); ok {
						fn.Idents = append(fn.Idents, r)
					}
				}
			}
			return true
		}, nil)
		for i, d := range resolved {
			if d != nil {
				fn.Compares[i].Type = declTypes[d]
			}
		}
		byPos := func(rs []Ref) {
			sort.SliceStable(rs, func(i, j int) bool {
				return rs[i].Line < rs[j].Line || rs[i].Line == rs[j].Line && rs[i].Col < rs[j].Col
			})
		}
		byPos(fn.Calls)
		byPos(fn.Idents)
		for _, r := range fn.Calls {
			if r.Name == "instrumentation_end" {
				fn.InstrEnd = append(fn.InstrEnd, r.Line)
			}
		}
		u.Funcs = append(u.Funcs, fn)
	}
	for name, m := range ast.Macros {
		if !m.IsFnLike || m.Name.Position().Filename != u.Path {
			continue
		}
		cm := Macro{Name: name, Line: m.Name.Position().Line}
		for _, t := range m.ReplacementList() {
			if t.Ch == rune(cc.IDENTIFIER) {
				cm.Idents = append(cm.Idents, t.SrcStr())
			}
		}
		u.Macros = append(u.Macros, cm)
	}
	sort.Slice(u.Macros, func(i, j int) bool { return u.Macros[i].Line < u.Macros[j].Line })
	sort.Slice(u.Funcs, func(i, j int) bool { return u.Funcs[i].Line < u.Funcs[j].Line })
	u.Refs = append([]Ref(nil), u.Uses...)
	for _, f := range u.Funcs {
		u.Refs = append(u.Refs, f.Idents...)
	}
}

// declaration records the function declarations of d that are in the
// unit's file, and the identifiers its initializers use.
func (u *Unit) declaration(d *cc.Declaration) {
	static, typedef, isConst := false, false, false
	walk(d.DeclarationSpecifiers, func(n cc.Node) bool {
		switch x := n.(type) {
		case *cc.StorageClassSpecifier:
			static = static || x.Case == cc.StorageClassSpecifierStatic
			typedef = typedef || x.Case == cc.StorageClassSpecifierTypedef
		case *cc.TypeQualifier:
			isConst = isConst || x.Case == cc.TypeQualifierConst
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
			if p := id.Declarator.Position(); p.Filename == u.Path {
				u.Decls = append(u.Decls, Decl{Name: id.Declarator.Name(), Line: p.Line, Static: static})
			}
		} else if dd != nil && !typedef && (dd.Case == cc.DirectDeclaratorIdent || dd.Case == cc.DirectDeclaratorArr) {
			if p := id.Declarator.Position(); p.Filename == u.Path {
				u.Vars = append(u.Vars, Decl{Name: id.Declarator.Name(), Line: p.Line, Static: static, Const: isConst && id.Declarator.Pointer == nil})
			}
		}
		if id.Initializer != nil {
			walk(id.Initializer, func(n cc.Node) bool {
				if x, ok := n.(*cc.PrimaryExpression); ok && x.Case == cc.PrimaryExpressionIdent {
					if r, ok := u.ref(x.Token); ok {
						u.Uses = append(u.Uses, r)
					}
				}
				return true
			}, nil)
		}
	}
}

// ref turns an identifier token into a Ref when it is in the unit's file.
func (u *Unit) ref(t cc.Token) (Ref, bool) {
	p := t.Position()
	if p.Filename != u.Path {
		return Ref{}, false
	}
	return Ref{Name: t.SrcStr(), Line: p.Line, Col: p.Column}, true
}

// locals returns the integer-like objects d declares in the unit's file:
// each declarator that is neither a pointer, an array nor a function,
// with the declaration's specifiers as its type ("unsigned long").
func (u *Unit) locals(d *cc.Declaration, types map[*cc.Declarator]string) []Param {
	if p := d.Position(); p.Filename != u.Path {
		return nil
	}
	var toks []cc.Token
	walk(d.DeclarationSpecifiers, nil, func(t cc.Token) {
		if t.Ch != 0 && t.SrcStr() != "" {
			toks = append(toks, t)
		}
	})
	sort.Slice(toks, func(i, j int) bool { return toks[i].Seq() < toks[j].Seq() })
	var parts []string
	for _, t := range toks {
		parts = append(parts, t.SrcStr())
	}
	typ := strings.Join(parts, " ")
	var out []Param
	for il := d.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
		id := il.InitDeclarator
		if id == nil || id.Declarator == nil || id.Declarator.Pointer != nil {
			continue
		}
		if dd := id.Declarator.DirectDeclarator; dd != nil && dd.Case == cc.DirectDeclaratorIdent {
			out = append(out, Param{Name: id.Declarator.Name(), Type: typ})
			types[id.Declarator] = typ
		}
	}
	return out
}

// compare records in fn a comparison of an identifier with an integer
// constant (op the operator token, a and b its operands), the identifier
// first: 0 > x is recorded as x < 0.
func (u *Unit) compare(fn *Func, resolved *[]*cc.Declarator, op cc.Token, a, b cc.ExpressionNode) {
	o := op.SrcStr()
	id, c := identOperand(a), constOperand(b)
	if id == nil || c == "" {
		id, c = identOperand(b), constOperand(a)
		o = flipped[o]
	}
	if id == nil || c == "" || o == "" {
		return
	}
	r, ok := u.ref(op)
	if !ok {
		return
	}
	fn.Compares = append(fn.Compares, Compare{Name: id.Token.SrcStr(), Op: o, Const: c, Line: r.Line, Col: r.Col})
	*resolved = append(*resolved, inScope(id))
}

// inScope returns the declarator the identifier id names where it is
// used, as C's scopes resolve it: the innermost scope that declares the
// name before the use; nil when none does (a macro's name, an
// enumerator, an object of a header cc/v4 was not given).
func inScope(id *cc.PrimaryExpression) *cc.Declarator {
	name, seq := id.Token.SrcStr(), id.Token.Seq()
	for s := id.LexicalScope(); s != nil; s = s.Parent {
		var found *cc.Declarator
		for _, n := range s.Nodes[name] {
			if d, ok := n.(*cc.Declarator); ok {
				if t := d.NameTok(); t.Seq() <= seq {
					found = d // the last declaration before the use
				}
			}
		}
		if found != nil {
			return found
		}
		for _, n := range s.Nodes[name] {
			if _, ok := n.(*cc.Declarator); !ok {
				return nil // an enumerator or a parameter of a prototype: no object of the function
			}
		}
	}
	return nil
}

// flipped is the operator with its operands swapped.
var flipped = map[string]string{"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}

// identOperand returns the identifier e is (parentheses aside), or nil.
func identOperand(e cc.ExpressionNode) *cc.PrimaryExpression {
	switch x := e.(type) {
	case *cc.PrimaryExpression:
		switch x.Case {
		case cc.PrimaryExpressionIdent:
			return x
		case cc.PrimaryExpressionExpr:
			return identOperand(x.ExpressionList)
		}
	}
	return nil
}

// constOperand returns the integer constant e is, as written ("0",
// "-1", "0x100UL"), or "".
func constOperand(e cc.ExpressionNode) string {
	switch x := e.(type) {
	case *cc.PrimaryExpression:
		switch x.Case {
		case cc.PrimaryExpressionInt:
			return x.Token.SrcStr()
		case cc.PrimaryExpressionExpr:
			return constOperand(x.ExpressionList)
		}
	case *cc.UnaryExpression:
		if x.Case == cc.UnaryExpressionMinus {
			if c := constOperand(x.CastExpression); c != "" && !strings.HasPrefix(c, "-") {
				return "-" + c
			}
		}
	}
	return ""
}
