package spec

import (
	"strconv"
	"strings"
)

// parseGuards parses src, a template as joinControlLines leaves it, into a
// program when it is written in the guard language, and returns nil
// otherwise: for anything else (range, variables, pipelines, other
// functions, numbers other than plain decimals, actions over several
// lines) and for every syntax error, text/template parses it and says what
// is wrong. What it accepts, it reads as text/template does: the program
// is the one compileProgram makes of text/template's tree
// (TestGuardParserAsTextTemplate compares them on every template of the
// built-in series and on generated ones). text/template's parser is most of
// what loading the spec costs; the spec's templates need none of it.
func parseGuards(src string) *program {
	p := &guardParser{src: src}
	nodes, end, ok := p.list()
	if !ok || end.kind != endOfInput {
		return nil
	}
	return &program{root: nodes}
}

// guardParser reads a template in the guard language.
type guardParser struct {
	src      string
	pos      int
	trimNext bool    // the last action ended with " -}}": the next text loses its leading spaces
	toks     []token // the tokens of the action being read, reused from one to the next
}

// spaceChars are the characters text/template's trim markers remove.
const spaceChars = " \t\r\n"

// ending is what ends a list of nodes.
type ending struct {
	kind int    // one of the constants below
	cond *gexpr // for elseIf
}

const (
	endOfInput = iota
	endAction  // {{end}}
	elseAction // {{else}}
	elseIf     // {{else if cond}}
)

// list reads nodes up to the end of the input or to the {{end}} or
// {{else}} that ends them.
func (p *guardParser) list() ([]gnode, ending, bool) {
	var out []gnode
	for {
		text, atEnd, ok := p.text()
		if !ok {
			return nil, ending{}, false
		}
		if text != "" {
			out = append(out, gnode{text: text}) // the source's own bytes
		}
		if atEnd {
			return out, ending{kind: endOfInput}, true
		}
		// Inside an action, after "{{" and its trim marker.
		if strings.HasPrefix(p.src[p.pos:], "/*") {
			if !p.comment() {
				return nil, ending{}, false
			}
			continue
		}
		toks, ok := p.action()
		if !ok || len(toks) == 0 {
			return nil, ending{}, false
		}
		switch {
		case toks[0].isWord("if"):
			cond, ok := pipeline(toks[1:])
			if !ok {
				return nil, ending{}, false
			}
			br, ok := p.branch(cond)
			if !ok {
				return nil, ending{}, false
			}
			out = append(out, gnode{branch: br})
		case toks[0].isWord("else"):
			if len(toks) == 1 {
				return out, ending{kind: elseAction}, true
			}
			if !toks[1].isWord("if") {
				return nil, ending{}, false
			}
			cond, ok := pipeline(toks[2:])
			if !ok {
				return nil, ending{}, false
			}
			return out, ending{kind: elseIf, cond: cond}, true
		case toks[0].isWord("end"):
			if len(toks) != 1 {
				return nil, ending{}, false
			}
			return out, ending{kind: endAction}, true
		default:
			e, ok := pipeline(toks)
			if !ok {
				return nil, ending{}, false
			}
			out = append(out, gnode{action: e})
		}
	}
}

// branch reads what follows {{if cond}}: the nodes up to its {{else}},
// {{else if}} or {{end}}, and what the else holds. An {{else if c}} is an
// if inside the else, ended by the same {{end}}, as text/template reads it.
func (p *guardParser) branch(cond *gexpr) (*gbranch, bool) {
	then, end, ok := p.list()
	if !ok {
		return nil, false
	}
	br := &gbranch{cond: cond, then: then}
	switch end.kind {
	case endAction:
		return br, true
	case elseAction:
		els, end, ok := p.list()
		if !ok || end.kind != endAction {
			return nil, false
		}
		br.els = els
		return br, true
	case elseIf:
		inner, ok := p.branch(end.cond)
		if !ok {
			return nil, false
		}
		br.els = []gnode{{branch: inner}}
		return br, true
	}
	return nil, false // the input ended inside the if
}

// text returns the text up to the next "{{" and moves past it and its
// left trim marker; atEnd when the input ends first.
func (p *guardParser) text() (text string, atEnd, ok bool) {
	rest := p.src[p.pos:]
	i := strings.Index(rest, "{{")
	if i < 0 {
		text, atEnd = rest, true
		p.pos = len(p.src)
	} else {
		text = rest[:i]
		p.pos += i + 2
	}
	if p.trimNext {
		text = strings.TrimLeft(text, spaceChars)
		p.trimNext = false
	}
	if !atEnd {
		after := p.src[p.pos:]
		if len(after) >= 2 && after[0] == '-' && strings.IndexByte(spaceChars, after[1]) >= 0 {
			text = strings.TrimRight(text, spaceChars)
			p.pos += 2
		} else if strings.HasPrefix(after, "-") {
			return "", false, false // a negative number, or a marker without its space
		}
	}
	return text, atEnd, true
}

// comment skips a comment, "/*" to "*/", and the "}}" or " -}}" right
// after it.
func (p *guardParser) comment() bool {
	p.pos += 2 // "/*": the "*/" is looked for after it ("/*/" is not one)
	i := strings.Index(p.src[p.pos:], "*/")
	if i < 0 {
		return false
	}
	p.pos += i + 2
	return p.rightDelim()
}

// rightDelim moves past "}}" or " -}}" at pos.
func (p *guardParser) rightDelim() bool {
	rest := p.src[p.pos:]
	switch {
	case strings.HasPrefix(rest, "}}"):
		p.pos += 2
	case len(rest) >= 4 && strings.IndexByte(spaceChars, rest[0]) >= 0 && rest[1:4] == "-}}":
		p.pos += 4
		p.trimNext = true
	default:
		return false
	}
	return true
}

// token is a token of an action.
type token struct {
	kind byte // 'w' word, 'f' field, 's' string, 'n' number, '(' or ')'
	text string
}

func (t token) isWord(w string) bool { return t.kind == 'w' && t.text == w }

// action reads the tokens of an action up to its "}}" and moves past it.
func (p *guardParser) action() ([]token, bool) {
	toks := p.toks[:0]
	defer func() { p.toks = toks[:0] }()
	for {
		// Spaces (never a newline: an action over several lines is
		// text/template's), or the right delimiter with its trim marker.
		start := p.pos
		for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
			p.pos++
		}
		if p.pos == len(p.src) {
			return nil, false
		}
		if p.pos > start && strings.HasPrefix(p.src[p.pos:], "-}}") {
			p.pos += 3 // spaces, then the trim marker and "}}"
			p.trimNext = true
			return toks, true
		}
		rest := p.src[p.pos:]
		c := rest[0]
		switch {
		case strings.HasPrefix(rest, "}}"):
			p.pos += 2
			return toks, true
		case c == '(' || c == ')':
			toks = append(toks, token{kind: c})
			p.pos++
		case c == '"' || c == '`':
			n := quotedLen(rest)
			if n < 0 {
				return nil, false
			}
			s, err := strconv.Unquote(rest[:n])
			if err != nil {
				return nil, false
			}
			toks = append(toks, token{kind: 's', text: s})
			p.pos += n
		case c == '.':
			n := 1 + wordLen(rest[1:])
			if n == 1 || n < len(rest) && rest[n] == '.' {
				return nil, false // the dot itself, or a chain of fields
			}
			toks = append(toks, token{kind: 'f', text: rest[1:n]})
			p.pos += n
		case c >= '0' && c <= '9':
			n := 0
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			if n > 1 && c == '0' {
				return nil, false // octal, as text/template reads it
			}
			toks = append(toks, token{kind: 'n', text: rest[:n]})
			p.pos += n
		case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			n := wordLen(rest)
			toks = append(toks, token{kind: 'w', text: rest[:n]})
			p.pos += n
		default:
			return nil, false // $variables, |, :=, newlines, ...
		}
		// An operand ends at a space, a ")" or the delimiter ("a.b",
		// "12x", `"a"b`, "since(" are text/template's to read or refuse).
		if last := toks[len(toks)-1]; last.kind != '(' && p.pos < len(p.src) {
			switch d := p.src[p.pos]; {
			case d == ' ' || d == '\t' || d == ')' || d == '}':
			default:
				return nil, false
			}
		}
	}
}

// wordLen returns the length of the identifier at the start of s.
func wordLen(s string) int {
	n := 0
	for n < len(s) {
		c := s[n]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || n > 0 && c >= '0' && c <= '9' {
			n++
			continue
		}
		break
	}
	return n
}

// quotedLen returns the length of the quoted string at the start of s
// ("..." with backslash escapes, or `...`), -1 if it does not end on the
// line.
func quotedLen(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\n':
			return -1
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			return i + 1
		}
	}
	return -1
}

// guardFuncNames are the functions the guard language calls.
var guardFuncNames = map[string]bool{
	"and": true, "or": true, "not": true, "eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"since": true, "before": true, "between": true, "created": true,
}

// pipeline reads the tokens of a pipeline of one command: a function and
// its arguments, or one operand.
func pipeline(toks []token) (*gexpr, bool) {
	e, rest, ok := command(toks)
	return e, ok && len(rest) == 0
}

// command reads a command from toks up to a ")" or their end and returns
// what is left.
func command(toks []token) (*gexpr, []token, bool) {
	if len(toks) == 0 {
		return nil, nil, false
	}
	if toks[0].kind == 'w' && guardFuncNames[toks[0].text] {
		e := &gexpr{fn: toks[0].text}
		toks = toks[1:]
		for len(toks) > 0 && toks[0].kind != ')' {
			a, rest, ok := operand(toks)
			if !ok {
				return nil, nil, false
			}
			e.args = append(e.args, a)
			toks = rest
		}
		return e, toks, true
	}
	e, rest, ok := operand(toks)
	if !ok || len(rest) > 0 && rest[0].kind != ')' {
		return nil, nil, false // arguments given to what is no function
	}
	return e, rest, true
}

// operand reads one argument: a constant, a field of . or a parenthesized
// command.
func operand(toks []token) (*gexpr, []token, bool) {
	t := toks[0]
	switch t.kind {
	case 's':
		return &gexpr{val: gvalue{kind: 's', s: t.text}}, toks[1:], true
	case 'n':
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, nil, false
		}
		return &gexpr{val: gvalue{kind: 'i', i: n}}, toks[1:], true
	case 'f':
		switch t.text {
		case "Version", "Step", "Patch":
			return &gexpr{field: t.text}, toks[1:], true
		}
	case 'w':
		switch t.text {
		case "true", "false":
			return &gexpr{val: gvalue{kind: 'b', b: t.text == "true"}}, toks[1:], true
		}
	case '(':
		e, rest, ok := command(toks[1:])
		if !ok || len(rest) == 0 || rest[0].kind != ')' {
			return nil, nil, false
		}
		return e, rest[1:], true
	}
	return nil, nil, false
}
