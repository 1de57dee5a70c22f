package cunit

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// The lexical cut of a C file into its top-level chunks, so that cc/v4 can
// be given some of them.

// Chunk is a top-level declaration or definition of a C file, found
// lexically (comments, strings and preprocessor lines skipped, braces and
// parentheses balanced) so that cc/v4 can be given some of them.
type Chunk struct {
	Start, End         int // byte offsets
	StartLine, EndLine int
	Fn                 bool   // a function definition
	Typedef            bool   // a typedef
	Brace              bool   // has a brace (a definition of a struct, union, enum or object)
	Name               string // a function's name (the identifier before its first parenthesis)
}

// Chunks splits a C file into its top-level chunks.
func Chunks(src []byte) []Chunk {
	var out []Chunk
	line := 1
	start, startLine := -1, 0
	braces, parens := 0, 0
	fnBody := false
	last := byte(0) // the last significant byte outside parentheses at depth 0
	name, firstParen := "", false
	word := ""
	atLineStart := true
	for i := 0; i < len(src); i++ {
		ch := src[i]
		if ch == '\n' {
			line++
			atLineStart = true
			continue
		}
		if ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' {
			continue
		}
		if ch == '#' && atLineStart { // a preprocessor line, with its continuations
			for i < len(src) && !(src[i] == '\n' && src[i-1] != '\\') {
				if src[i] == '\n' {
					line++
				}
				i++
			}
			line++
			continue
		}
		atLineStart = false
		if ch == '/' && i+1 < len(src) && src[i+1] == '/' {
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
			continue
		}
		if ch == '/' && i+1 < len(src) && src[i+1] == '*' {
			i += 2
			for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
				if src[i] == '\n' {
					line++
				}
				i++
			}
			i++
			continue
		}
		if start < 0 {
			start, startLine = i, line
			braces, parens, fnBody, last, name, firstParen, word = 0, 0, false, 0, "", false, ""
		}
		if ch == '"' || ch == '\'' {
			for i++; i < len(src) && src[i] != ch; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			last = ch
			continue
		}
		if isIdentByte(ch) {
			j := i
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			word = string(src[i:j])
			i = j - 1
			last = 'a'
			continue
		}
		end := false
		switch ch {
		case '(':
			if braces == 0 && parens == 0 && !firstParen {
				firstParen, name = true, word
			}
			parens++
		case ')':
			parens--
			if parens == 0 && braces == 0 {
				last = ')'
				continue
			}
		case '{':
			if braces == 0 && parens == 0 && last == ')' {
				fnBody = true
			}
			braces++
		case '}':
			if braces == 0 { // a brace that closes what came before the text (a hunk's context)
				start = -1
				continue
			}
			braces--
			if braces == 0 && fnBody {
				end = true
			}
		case ';':
			if braces == 0 && parens == 0 {
				end = true
			}
		}
		if braces == 0 && parens == 0 {
			last = ch
		}
		if end {
			text := string(src[start : i+1])
			out = append(out, Chunk{Start: start, End: i + 1, StartLine: startLine, EndLine: line, Fn: fnBody,
				Typedef: !fnBody && strings.HasPrefix(text, "typedef"), Brace: strings.Contains(text, "{"), Name: name})
			start = -1
		}
	}
	return out
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// blankExcept keeps the preprocessor lines of src and the chunks given,
// and blanks every other byte but the newlines, so that lines keep their
// numbers.
func blankExcept(src []byte, keep []Chunk) []byte {
	kept := make([]bool, len(src))
	for _, ch := range keep {
		for i := ch.Start; i < ch.End; i++ {
			kept[i] = true
		}
	}
	// the preprocessor lines, with their continuations: a directive
	// ends at the first newline outside a comment that no backslash
	// escapes ("#define X 1 /* a comment that goes on" keeps the lines
	// up to its "*/"); a '#' inside a comment starts none
	lineStart, inComment := true, false
	for i := 0; i < len(src); i++ {
		ch := src[i]
		switch {
		case inComment:
			if ch == '*' && i+1 < len(src) && src[i+1] == '/' {
				inComment = false
				i++
			}
		case ch == '/' && i+1 < len(src) && src[i+1] == '*':
			inComment, lineStart = true, false
			i++
		case ch == '"' || ch == '\'': // a literal: "/*" in it opens nothing
			for i++; i < len(src) && src[i] != ch && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			lineStart = false
		case ch == '\n':
			lineStart = true
		case ch == ' ' || ch == '\t':
		case ch == '#' && lineStart:
			j, in := i, false
			for j < len(src) {
				if !in && src[j] == '\n' && src[j-1] != '\\' {
					break
				}
				switch {
				case in && src[j] == '*' && j+1 < len(src) && src[j+1] == '/':
					kept[j] = true
					j++
					in = false
				case !in && src[j] == '/' && j+1 < len(src) && src[j+1] == '*':
					kept[j] = true
					j++
					in = true
				case !in && src[j] == '/' && j+1 < len(src) && src[j+1] == '/':
					for j < len(src) && src[j] != '\n' { // a line comment ends the directive's line
						kept[j] = true
						j++
					}
					continue
				}
				kept[j] = true
				j++
			}
			i = j - 1
		default:
			lineStart = false
		}
	}
	// What is left out goes, but its newlines stay: the kept code keeps
	// its lines (and its columns, as chunks start their lines), and cc/v4
	// does not scan the blanks.
	out := make([]byte, 0, len(src))
	for i, ch := range src {
		if kept[i] || ch == '\n' {
			out = append(out, ch)
		}
	}
	return out
}

// cKeywords are the C keywords that can precede an identifier.
var cKeywords = map[string]bool{"if": true, "while": true, "for": true, "switch": true, "return": true, "sizeof": true,
	"do": true, "else": true, "goto": true, "case": true, "struct": true, "union": true, "enum": true, "const": true,
	"volatile": true, "static": true, "extern": true, "inline": true, "unsigned": true, "signed": true, "int": true,
	"long": true, "short": true, "char": true, "void": true, "typedef": true, "register": true, "auto": true}

// typedefWords returns the identifiers of src that end in _t: the
// kernel's typedef names.
func typedefWords(src []byte) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < len(src); {
		if !isIdentByte(src[i]) {
			i++
			continue
		}
		j := i
		for j < len(src) && isIdentByte(src[j]) {
			j++
		}
		if j-i > 2 && src[j-2] == '_' && src[j-1] == 't' && !(src[i] >= '0' && src[i] <= '9') {
			out[string(src[i:j])] = true
		}
		i = j
	}
	return out
}

// CodeOnly blanks the comments and string literals of C source, keeping
// the lines.
func CodeOnly(src []byte) []byte {
	out := append([]byte(nil), src...)
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '*':
			for ; i < len(out) && !(out[i] == '*' && i+1 < len(out) && out[i+1] == '/'); i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			if i+1 < len(out) {
				out[i], out[i+1] = ' ', ' '
				i++
			}
		case out[i] == '"':
			for i++; i < len(out) && out[i] != '"' && out[i] != '\n'; i++ {
				if out[i] == '\\' && i+1 < len(out) {
					out[i] = ' '
					i++
				}
				out[i] = ' '
			}
		}
	}
	return out
}

// identWordRE is a C identifier.
var identWordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z_]\w*`) })

// ccSourceRE is the position in cc/v4's own source some of its messages carry.
var ccSourceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` \(\w+\.go:\d+:\w+:\)`) })

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
