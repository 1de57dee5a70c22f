package cunit

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"modernc.org/cc/v4"
)

// Parsing a unit with cc/v4: chunks cc/v4 cannot read are left out and
// recorded, names used as types and iterator macros are declared.

var cErrRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+?):(\d+):(\d+): (.*)$`) })

// parseChunks parses the chunks of text kept, after the prelude for e, with
// the series' headers at patch n. A chunk cc/v4 cannot parse is left out
// (and recorded); a name that is used as a type but that nothing declares
// is declared a typedef, as the kernel headers would.
func (r *Reader) parseChunks(path string, n int, e Env, text []byte, keep []Chunk) *Unit {
	u := &Unit{Path: path, Text: text}
	cfg, err := r.parseConfig(n, e)
	if err != nil {
		u.Err = err
		return u
	}
	typedefs := typedefWords(blankExcept(text, keep))
	loops := map[string]bool{}
	var ast *cc.AST
	for try := 0; ; try++ {
		src := blankExcept(text, keep)
		ast, err = ccParse(cfg, []cc.Source{
			{Name: "<prelude>", Value: e.unitPrelude(sortedKeys(typedefs), sortedKeys(loops))},
			{Name: path, Value: src},
		})
		if err == nil {
			break
		}
		if try > 60 {
			u.Err = err
			return u
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		m := cErrRE().FindStringSubmatch(first)
		if m == nil || m[1] != path {
			u.Err = err
			return u
		}
		var line, col int
		fmt.Sscan(m[2], &line)
		fmt.Sscan(m[3], &col)
		if strings.HasPrefix(m[4], "unexpected identifier") {
			if w := wordBefore(src, line, col); w != "" && !typedefs[w] && !cKeywords[w] {
				typedefs[w] = true // "name x": name is a type the empty headers would have declared
				continue
			}
		}
		if w := loopMacroAt(src, line); w != "" && !loops[w] {
			loops[w] = true // "name(...) {": an iterator macro the empty headers would have defined
			continue
		}
		i := -1
		for j, ch := range keep {
			if line >= ch.StartLine && line <= ch.EndLine {
				i = j
			}
		}
		if i < 0 {
			u.Err = err
			return u
		}
		u.Failed = append(u.Failed, Failure{keep[i].Fn, keep[i].Name, keep[i].StartLine, line, m[4]})
		keep = append(keep[:i:i], keep[i+1:]...)
	}
	u.collect(ast)
	return u
}

// loopCallRE is a statement that is an invocation without a semicolon,
// indented (inside a body): "\tname(args) {" or "\tname(args)".
var loopCallRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]+([A-Za-z_]\w*)\s*\(.*\)\s*\{?\s*$`) })

// loopMacroAt returns the name of an iterator macro invoked on line (or
// the line before, where cc/v4 stops at the loop's body), or "".
func loopMacroAt(src []byte, line int) string {
	lines := strings.Split(string(src), "\n")
	for l := line; l >= line-1 && l >= 1; l-- {
		if l > len(lines) {
			continue
		}
		if m := loopCallRE().FindStringSubmatch(lines[l-1]); m != nil && !cKeywords[m[1]] && m[1] != "defined" {
			return m[1]
		}
	}
	return ""
}

// wordBefore returns the identifier that ends right before the token at
// line, col of src (1-based), or "".
func wordBefore(src []byte, line, col int) string {
	lines := strings.Split(string(src), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	l := lines[line-1]
	if col-1 > len(l) {
		return ""
	}
	b := strings.TrimRight(l[:col-1], " \t")
	for line > 1 && b == "" { // the type may end the line before
		line--
		b = strings.TrimRight(lines[line-1], " \t")
	}
	j := len(b)
	for j > 0 && isIdentByte(b[j-1]) {
		j--
	}
	if j == len(b) || b[j] >= '0' && b[j] <= '9' {
		return ""
	}
	return b[j:]
}

// parseConfig is the cc/v4 configuration the units are parsed with.
func (r *Reader) parseConfig(n int, e Env) (*cc.Config, error) {
	cfg, err := r.config(n, e, false)
	if err != nil {
		return nil, err
	}
	cfg.Header = false
	return cfg, nil
}
