package verify

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"modernc.org/cc/v4"
)

// This file is the layer the rules on function bodies read C through: one
// file of the series at one patch, preprocessed and parsed by cc/v4 (the
// series' own headers served with their declarations, every other header
// empty, the prelude standing in for the rest of the kernel), for one
// build (ABI and options). Positions are the file's real lines, so
// findings carry file:line of the tree at that patch.

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

// unitSide selects which content of a file a unit reads.
type unitSide int

const (
	afterPatch  unitSide = iota // the file after patch n
	beforePatch                 // the file before patch n (after n-1)
)

type unitKey struct {
	path string
	n    int
	side unitSide
	env  string
}

// unitCache parses each unit once per Run; the rules run in parallel and
// ask for the same units.
type unitCache struct {
	mu     sync.Mutex
	units  map[unitKey]*unitEntry
	parsed map[string]*unitEntry // by input (see parseUnit)
	inputs map[inputKey]*unitInput
	names  map[string]map[string]int // path -> function -> the first patch that touched it
	texts  map[textKey]*textEntry
	evals  map[string]Finding // C_EVAL findings by what failed (see evalFinding)
}

type unitEntry struct {
	once sync.Once
	u    *cUnit
}

func newUnitCache() *unitCache {
	return &unitCache{units: map[unitKey]*unitEntry{}, parsed: map[string]*unitEntry{}, inputs: map[inputKey]*unitInput{}, names: map[string]map[string]int{}, texts: map[textKey]*textEntry{}, evals: map[string]Finding{}}
}

// unit returns path parsed in e after (or before) patch n, or nil when the
// file does not exist there. Files the series creates are read whole; of
// a file it edits, only the definitions the series touches up to that
// patch (and the declarations patch n changes) are kept, the rest of the
// file blanked but its preprocessor lines kept. An edit whose result is
// unknown (posted mail without the tree) is read from its hunk: its lines
// at their line numbers.
func (c *checker) unit(path string, n int, side unitSide, e cenv) *cUnit {
	c.stopped()
	k := unitKey{path, n, side, e.String()}
	c.units.mu.Lock()
	ent := c.units.units[k]
	if ent == nil {
		ent = &unitEntry{}
		c.units.units[k] = ent
	}
	c.units.mu.Unlock()
	ent.once.Do(func() { ent.u = c.s.parseUnit(c.units, c.input(path, n, side), path, e) })
	return ent.u
}

// fileOf returns the change patch n makes to path, or nil.
func fileOf(p *Patch, path string) *File {
	if p == nil {
		return nil
	}
	for _, f := range p.Files {
		if f.Path == path {
			return f
		}
	}
	return nil
}

// unitInput is what a unit gives cc/v4, whatever the build.
type unitInput struct {
	once   sync.Once
	digest []byte   // of the input, see inputDigest
	conds  []string // the names its conditionals test
	at     int      // the patch whose result is read
	text   []byte   // the file (or the hunk's lines)
	keep   []cChunk
	blank  []byte // text with only keep and the preprocessor lines
}

type inputKey struct {
	path string
	n    int
	side unitSide
}

// input returns what the unit of path after (or before) patch n reads, or
// nil when the file does not exist there.
func (c *checker) input(path string, n int, side unitSide) *unitInput {
	k := inputKey{path, n, side}
	c.units.mu.Lock()
	in, ok := c.units.inputs[k]
	c.units.mu.Unlock()
	if ok {
		return in
	}
	in = c.s.unitInput(c.units, path, n, side)
	c.units.mu.Lock()
	c.units.inputs[k] = in
	c.units.mu.Unlock()
	return in
}

func (s *Series) unitInput(cache *unitCache, path string, n int, side unitSide) *unitInput {
	at := n
	if side == beforePatch {
		at = n - 1
	}
	f := fileOf(s.Patch(n), path)
	var text []byte
	var changed []Line // the lines patch n changes, numbered in text
	sparse := false
	switch {
	case f != nil && !f.Known:
		lines := f.Added
		if side == beforePatch {
			lines = f.Removed
		}
		text, changed, sparse = sparseText(lines), lines, true
	default:
		c, ok := s.FileAt(path, at)
		if !ok {
			return nil
		}
		text = c
		if f != nil {
			changed = f.Added
			if side == beforePatch {
				changed = f.Removed
			}
		}
	}
	if !sparse {
		// The same version of the file with the same changed lines reads
		// the same: share what is cut from it.
		tk := textKey{path: path, version: s.version(path, at)}
		if f != nil {
			tk.changedBy, tk.side = n, side
		}
		cache.mu.Lock()
		ent := cache.texts[tk]
		if ent == nil {
			ent = &textEntry{}
			cache.texts[tk] = ent
		}
		cache.mu.Unlock()
		ent.once.Do(func() { ent.keep, ent.blank = s.cutUnit(cache, path, at, text, changed, false) })
		return &unitInput{at: at, text: text, keep: ent.keep, blank: ent.blank}
	}
	keep, blank := s.cutUnit(cache, path, at, text, changed, true)
	return &unitInput{at: at, text: text, keep: keep, blank: blank}
}

// textKey identifies what a unit reads of a file: its version (the last
// patch that changed it), and the patch whose changed lines are kept with
// the side they are on (0 when the unit's patch does not change the file).
type textKey struct {
	path      string
	version   int
	changedBy int
	side      unitSide
}

// textEntry is what cutUnit made of a textKey.
type textEntry struct {
	once  sync.Once
	keep  []cChunk
	blank []byte
}

// cutUnit chooses the chunks of text a unit gives cc/v4 (see unit) and
// blanks the rest.
func (s *Series) cutUnit(cache *unitCache, path string, at int, text []byte, changed []Line, sparse bool) ([]cChunk, []byte) {
	whole := sparse || s.created[path]
	var touched map[string]int
	if !whole {
		touched = cache.touchedNames(s, path)
	}
	var keep []cChunk
	for _, ch := range cChunks(text) {
		switch {
		case whole, ch.typedef:
			keep = append(keep, ch)
		case ch.fn && touched[ch.name] > 0 && touched[ch.name] <= at:
			keep = append(keep, ch)
		case !ch.fn && !ch.brace && overlaps(ch, changed): // a declaration (a prototype) the patch changes
			keep = append(keep, ch)
		case ch.fn && overlaps(ch, changed):
			keep = append(keep, ch)
		}
	}
	return keep, blankExcept(text, keep)
}

func (s *Series) parseUnit(cache *unitCache, in *unitInput, path string, e cenv) *cUnit {
	if in == nil {
		return nil
	}
	at, text, keep, blank := in.at, in.text, in.keep, in.blank
	// Units with the same input parse the same: the file as given to
	// cc/v4, the series' headers it includes, and what the build decides
	// in their conditionals (two builds that define the same of the names
	// the #if lines test see the same code).
	in.once.Do(func() { in.digest, in.conds = s.inputDigest(path, at, blank) })
	h := sha256.New()
	h.Write(in.digest)
	defined := map[string]bool{}
	for _, d := range e.defines {
		defined[d] = true
	}
	for _, n := range in.conds {
		switch {
		case n == "BITS_PER_LONG":
			fmt.Fprintf(h, "\x00%s=%d", n, e.bits)
		case strings.HasPrefix(n, "__"): // the compiler's predefined macros
			fmt.Fprintf(h, "\x00%s@%s", n, e.arch)
		default:
			fmt.Fprintf(h, "\x00%s=%v", n, defined[n])
		}
	}
	key := string(h.Sum(nil))
	cache.mu.Lock()
	ent := cache.parsed[key]
	if ent == nil {
		ent = &unitEntry{}
		cache.parsed[key] = ent
	}
	cache.mu.Unlock()
	ent.once.Do(func() { ent.u = parseChunks(s, path, at, e, text, keep) })
	return ent.u
}

// inputDigest hashes what a unit of path reads at patch n (blank, and the
// series' headers it includes) and lists the names their conditionals test.
func (s *Series) inputDigest(path string, n int, blank []byte) ([]byte, []string) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", path)
	h.Write(blank)
	conds := map[string]bool{}
	scan := func(src []byte) {
		eachDirective(src, func(name string, rest []byte) {
			switch name {
			case "if", "ifdef", "ifndef", "elif":
				for _, w := range identWordRE.FindAll(rest, -1) {
					if string(w) != "defined" {
						conds[string(w)] = true
					}
				}
			}
		})
	}
	scan(blank)
	for _, inc := range s.includedHeaders(n, blank) {
		c, _ := s.FileAt(inc, n)
		fmt.Fprintf(h, "\x00%s\x00%d\x00", inc, len(c))
		h.Write(c)
		scan(c)
	}
	return h.Sum(nil), sortedKeys(conds)
}

// eachDirective calls f with the name and the rest of every preprocessor
// line of src (continuations joined).
func eachDirective(src []byte, f func(name string, rest []byte)) {
	for len(src) > 0 {
		i := 0
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		end := i
		for end < len(src) && !(src[end] == '\n' && (end == 0 || src[end-1] != '\\')) {
			end++
		}
		if i < len(src) && src[i] == '#' {
			d := bytes.TrimLeft(src[i+1:end], " \t")
			j := 0
			for j < len(d) && isIdentByte(d[j]) {
				j++
			}
			f(string(d[:j]), d[j:])
		}
		if end >= len(src) {
			break
		}
		src = src[end+1:]
	}
}

// includedHeaders returns the headers the series creates that src
// includes at patch n, directly or through one another, as cfs serves
// them.
func (s *Series) includedHeaders(n int, src []byte) []string {
	seen := map[string]bool{}
	var visit func(src []byte)
	visit = func(src []byte) {
		eachDirective(src, func(d string, rest []byte) {
			if d != "include" {
				return
			}
			name := strings.Trim(strings.TrimSpace(string(rest)), `<>"`)
			for _, cand := range []string{"include/" + name, "arch/x86/include/" + name,
				"include/asm-generic/" + strings.TrimPrefix(name, "asm/")} {
				if !s.created[cand] || seen[cand] {
					continue
				}
				if c, ok := s.FileAt(cand, n); ok {
					seen[cand] = true
					visit(c)
				}
			}
		})
	}
	visit(src)
	return sortedKeys(seen)
}

// touchedNames returns, for the functions of path (a file the series
// edits) whose definitions a patch changed, the first patch that did; a
// function counts at patch n when that is n or before.
func (uc *unitCache) touchedNames(s *Series, path string) map[string]int {
	uc.mu.Lock()
	defer uc.mu.Unlock()
	first, ok := uc.names[path]
	if !ok {
		first = map[string]int{}
		for _, k := range s.changes[path] {
			f := fileOf(s.Patches[k-1], path)
			if f == nil || !f.Known || f.Deleted {
				continue
			}
			for _, ch := range cChunks(f.New) {
				if _, seen := first[ch.name]; ch.fn && !seen && overlaps(ch, f.Added) {
					first[ch.name] = k
				}
			}
		}
		uc.names[path] = first
	}
	return first
}

// sparseText places lines at their line numbers, blank lines between.
func sparseText(lines []Line) []byte {
	var b strings.Builder
	cur := 1
	for _, l := range lines {
		for ; cur < l.N; cur++ {
			b.WriteByte('\n')
		}
		if cur == l.N {
			b.WriteString(l.Text)
			b.WriteByte('\n')
			cur++
		}
	}
	return []byte(b.String())
}

func overlaps(ch cChunk, lines []Line) bool {
	for _, l := range lines {
		if l.N >= ch.startLine && l.N <= ch.endLine {
			return true
		}
	}
	return false
}

// cChunk is a top-level declaration or definition of a C file, found
// lexically (comments, strings and preprocessor lines skipped, braces and
// parentheses balanced) so that cc/v4 can be given some of them.
type cChunk struct {
	start, end         int // byte offsets
	startLine, endLine int
	fn                 bool   // a function definition
	typedef            bool   // a typedef
	brace              bool   // has a brace (a definition of a struct, union, enum or object)
	name               string // a function's name (the identifier before its first parenthesis)
}

// cChunks splits a C file into its top-level chunks.
func cChunks(src []byte) []cChunk {
	var out []cChunk
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
			out = append(out, cChunk{start: start, end: i + 1, startLine: startLine, endLine: line, fn: fnBody,
				typedef: !fnBody && strings.HasPrefix(text, "typedef"), brace: strings.Contains(text, "{"), name: name})
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
func blankExcept(src []byte, keep []cChunk) []byte {
	kept := make([]bool, len(src))
	for _, ch := range keep {
		for i := ch.start; i < ch.end; i++ {
			kept[i] = true
		}
	}
	// the preprocessor lines, with their continuations
	lineStart := true
	for i := 0; i < len(src); i++ {
		ch := src[i]
		switch {
		case ch == '\n':
			lineStart = true
		case ch == ' ' || ch == '\t':
		case ch == '#' && lineStart:
			j := i
			for j < len(src) && !(src[j] == '\n' && src[j-1] != '\\') {
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

var cErrRE = regexp.MustCompile(`^(.+?):(\d+):(\d+): (.*)$`)

// parseChunks parses the chunks of text kept, after the prelude for e, with
// the series' headers at patch n. A chunk cc/v4 cannot parse is left out
// (and recorded); a name that is used as a type but that nothing declares
// is declared a typedef, as the kernel headers would.
func parseChunks(s *Series, path string, n int, e cenv, text []byte, keep []cChunk) *cUnit {
	u := &cUnit{path: path, text: text}
	cfg, err := s.parseConfig(n, e)
	if err != nil {
		u.err = err
		return u
	}
	typedefs := typedefWords(blankExcept(text, keep))
	loops := map[string]bool{}
	var ast *cc.AST
	for try := 0; ; try++ {
		src := blankExcept(text, keep)
		ast, err = cc.Parse(cfg, []cc.Source{
			{Name: "<prelude>", Value: e.unitPrelude(sortedKeys(typedefs), sortedKeys(loops))},
			{Name: path, Value: src},
		})
		if err == nil {
			break
		}
		if try > 60 {
			u.err = err
			return u
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		m := cErrRE.FindStringSubmatch(first)
		if m == nil || m[1] != path {
			u.err = err
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
			if line >= ch.startLine && line <= ch.endLine {
				i = j
			}
		}
		if i < 0 {
			u.err = err
			return u
		}
		u.failed = append(u.failed, cFailure{keep[i].fn, keep[i].name, keep[i].startLine, line, m[4]})
		keep = append(keep[:i:i], keep[i+1:]...)
	}
	u.collect(ast)
	return u
}

// loopCallRE is a statement that is an invocation without a semicolon,
// indented (inside a body): "\tname(args) {" or "\tname(args)".
var loopCallRE = regexp.MustCompile(`^[ \t]+([A-Za-z_]\w*)\s*\(.*\)\s*\{?\s*$`)

// loopMacroAt returns the name of an iterator macro invoked on line (or
// the line before, where cc/v4 stops at the loop's body), or "".
func loopMacroAt(src []byte, line int) string {
	lines := strings.Split(string(src), "\n")
	for l := line; l >= line-1 && l >= 1; l-- {
		if l > len(lines) {
			continue
		}
		if m := loopCallRE.FindStringSubmatch(lines[l-1]); m != nil && !cKeywords[m[1]] && m[1] != "defined" {
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
func (s *Series) parseConfig(n int, e cenv) (*cc.Config, error) {
	cfg, err := s.config(n, e, false)
	if err != nil {
		return nil, err
	}
	cfg.Header = false
	return cfg, nil
}

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

// unitPrelude is what the kernel headers a unit does not read would have
// given its functions: the build's options and BITS_PER_LONG, the types,
// the attributes as GNU attributes cc/v4 keeps in the AST (noinstr as its
// section, __always_inline as inline plus always_inline), the other
// annotations empty, and the kernel's loop macros as the for statements
// they are. typedefs are names the file uses as types; loops are names of
// iterator macros the file uses that the prelude does not define.
func (e cenv) unitPrelude(typedefs, loops []string) string {
	var b strings.Builder
	b.WriteString(e.preludeDefines())
	b.WriteString(`#define __always_inline inline __attribute__((__always_inline__))
#define noinstr __attribute__((__section__(".noinstr.text")))
#define __ARG_PLACEHOLDER_1 0,
#define __take_second_arg(__ignored, val, ...) val
#define __is_defined(x) ___is_defined(x)
#define ___is_defined(val) ____is_defined(__ARG_PLACEHOLDER_##val)
#define ____is_defined(arg1_or_junk) __take_second_arg(arg1_or_junk 1, 0)
#define IS_ENABLED(option) __is_defined(option)
#define IS_BUILTIN(option) __is_defined(option)
#define IS_MODULE(option) 0
#define __user
#define __kernel
#define __iomem
#define __percpu
#define __rcu
#define __force
#define __init
#define __exit
#define __initdata
#define __ref
#define __sched
#define __cold
#define __weak
#define __visible
#define __noreturn
#define __must_check
#define __maybe_unused
#define __always_unused
#define __latent_entropy
#define __read_mostly
#define __ro_after_init
#define __randomize_layout
#define __packed
#define __aligned(x)
#define __printf(a, b)
#define __acquires(x)
#define __releases(x)
#define __must_hold(x)
#define __cond_acquires(x)
#define __section(x)
#define __counted_by(x)
#define __free(x)
#define noinline
#define notrace
#define nokprobe_inline inline
#define asmlinkage
#define __no_kcsan
#define __no_sanitize_address
#define fastcall
#define likely(x) (x)
#define unlikely(x) (x)
#define for_each_process_thread(p, t) for (p = 0, t = 0; p; p = 0)
#define list_for_each_entry(pos, head, member) for (pos = (void *)(head); pos; pos = 0)
#define list_for_each_entry_safe(pos, n, head, member) for (pos = (void *)(head), n = 0; pos; pos = n)
#define list_for_each_entry_rcu(pos, head, member, ...) for (pos = (void *)(head); pos; pos = 0)
#define list_for_each_entry_srcu(pos, head, member, cond) for ((void)(cond), pos = (void *)(head); pos; pos = 0)
#define hlist_for_each_entry(pos, head, member) for (pos = (void *)(head); pos; pos = 0)
#define for_each_possible_cpu(cpu) for (cpu = 0; cpu < 1; cpu++)
#define for_each_online_cpu(cpu) for (cpu = 0; cpu < 1; cpu++)
#define for_each_set_bit(bit, addr, size) for (bit = 0; bit < (size) && (addr); bit++)
#define container_of(ptr, type, member) ((type *)(ptr))
#define container_of_const(ptr, type, member) ((type *)(ptr))
#define list_entry(ptr, type, member) ((type *)(ptr))
#define list_first_entry(ptr, type, member) ((type *)(ptr))
#define list_first_entry_or_null(ptr, type, member) ((type *)(ptr))
#define list_last_entry(ptr, type, member) ((type *)(ptr))
#define hlist_entry(ptr, type, member) ((type *)(ptr))
#define sizeof_field(type, member) sizeof(((type *)0)->member)
#define offsetof(type, member) __builtin_offsetof(type, member)
#define scoped_guard(_name, ...) if (1)
#define scoped_cond_guard(_name, _fail, ...) if (1)
#define __net_init
#define __net_exit
#define __net_initdata
#define __initconst
#define __init_or_module
#define __exit_p(x) x
#define min_t(type, x, y) ((type)(x) < (type)(y) ? (type)(x) : (type)(y))
#define max_t(type, x, y) ((type)(x) > (type)(y) ? (type)(x) : (type)(y))
#define clamp_t(type, val, lo, hi) min_t(type, max_t(type, val, lo), hi)
#define clamp_val(val, lo, hi) clamp_t(typeof(val), val, lo, hi)
#define hlist_for_each_entry_rcu(pos, head, member, ...) for (pos = (void *)(head); pos; pos = 0)
#define hlist_for_each_entry_safe(pos, n, head, member) for (pos = (void *)(head), n = 0; pos; pos = n)
#define list_for_each(pos, head) for (pos = (head); pos; pos = 0)
#define list_for_each_safe(pos, n, head) for (pos = (head), n = 0; pos; pos = n)
#define list_for_each_entry_reverse(pos, head, member) for (pos = (void *)(head); pos; pos = 0)
#define list_for_each_entry_continue(pos, head, member) for (pos = (void *)(head); pos; pos = 0)
#define skb_list_walk_safe(first, skb, next_skb) for (skb = (first), next_skb = 0; skb; skb = next_skb)
#define skb_queue_walk(queue, skb) for (skb = (void *)(queue); skb; skb = 0)
#define skb_queue_walk_safe(queue, skb, tmp) for (skb = (void *)(queue), tmp = 0; skb; skb = tmp)
#define for_each_cpu(cpu, mask) for (cpu = 0; cpu < 1 && (mask); cpu++)
#define for_each_node(node) for (node = 0; node < 1; node++)
#define for_each_online_node(node) for (node = 0; node < 1; node++)
#define __define_initcall_use(fn, id) static void *__initcall_##id##_##fn __attribute__((__unused__)) = (void *)fn;
#define module_init(fn) __define_initcall_use(fn, module)
#define module_exit(fn) __define_initcall_use(fn, exit)
#define early_initcall(fn) __define_initcall_use(fn, early)
#define core_initcall(fn) __define_initcall_use(fn, core)
#define postcore_initcall(fn) __define_initcall_use(fn, postcore)
#define arch_initcall(fn) __define_initcall_use(fn, arch)
#define subsys_initcall(fn) __define_initcall_use(fn, subsys)
#define fs_initcall(fn) __define_initcall_use(fn, fs)
#define device_initcall(fn) __define_initcall_use(fn, device)
#define late_initcall(fn) __define_initcall_use(fn, late)
#define late_initcall_sync(fn) __define_initcall_use(fn, late_sync)
#define __initcall(fn) device_initcall(fn)
#define __exitcall(fn) module_exit(fn)
#define EXPORT_SYMBOL(sym) extern int __export_##sym
#define EXPORT_SYMBOL_GPL(sym) extern int __export_##sym
int __predefined_declarator;
`)
	b.WriteString(preludeTypes)
	b.WriteString(unitTypes)
	for _, t := range typedefs {
		if !preludeTypeNames[t] && !unitTypeNames[t] {
			fmt.Fprintf(&b, "typedef int %s;\n", t)
		}
	}
	for _, m := range loops {
		// an iterator macro the prelude does not know: a loop over its
		// arguments (their identifiers stay uses)
		fmt.Fprintf(&b, "#define %s(...) for ((void)(__VA_ARGS__);;)\n", m)
	}
	return b.String()
}

// unitTypes are the kernel's typedef names that do not end in _t (those
// are declared as they are met, see typedefWords).
const unitTypes = `typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef unsigned short __le16, __be16;
typedef unsigned int __le32, __be32;
typedef unsigned long long __le64, __be64;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef unsigned short ushort;
`

var unitTypeNames = map[string]bool{"__u8": true, "__u16": true, "__u32": true, "__u64": true, "__s8": true, "__s16": true,
	"__s32": true, "__s64": true, "__le16": true, "__be16": true, "__le32": true, "__be32": true, "__le64": true,
	"__be64": true, "uint": true, "ulong": true, "ushort": true}

// unitsAt returns path after (or before) patch p in every build (x86_64
// and i386, options on and off); what cc/v4 could not read there is
// reported as C_EVAL.
func (c *checker) unitsAt(p *Patch, path string, side unitSide) []*cUnit {
	var out []*cUnit
	for _, e := range envs() {
		u := c.unit(path, p.Number, side, e)
		if u == nil {
			continue
		}
		if side == afterPatch {
			if u.err != nil {
				c.unreadable(p, path, "", 0, fmt.Errorf("%s: %w", e, u.err))
			}
			for _, f := range u.failed {
				if f.fn {
					c.unreadable(p, path, f.name, f.start, fmt.Errorf("line %d: %s", f.line, f.msg))
				}
			}
		}
		out = append(out, u)
	}
	return out
}

// funcsAt returns the function definitions of path after (or before) patch
// p, in any build, once each (by name and line).
func (c *checker) funcsAt(p *Patch, path string, side unitSide) []*cFunc {
	return onceByLine(c.unitsAt(p, path, side), func(u *cUnit) []*cFunc { return u.funcs },
		func(f *cFunc) (string, int) { return f.name, f.line })
}

// declsAt is funcsAt for the function declarations.
func (c *checker) declsAt(p *Patch, path string, side unitSide) []cDecl {
	return onceByLine(c.unitsAt(p, path, side), func(u *cUnit) []cDecl { return u.decls },
		func(d cDecl) (string, int) { return d.name, d.line })
}

// onceByLine gathers the items of several builds' units, once each by name
// and line, in line order.
func onceByLine[T any](units []*cUnit, items func(*cUnit) []T, at func(T) (string, int)) []T {
	var out []T
	seen := map[string]bool{}
	for _, u := range units {
		for _, it := range items(u) {
			name, line := at(it)
			k := fmt.Sprintf("%s:%d", name, line)
			if !seen[k] {
				seen[k] = true
				out = append(out, it)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { _, a := at(out[i]); _, b := at(out[j]); return a < b })
	return out
}

// within reports whether every line from a to b is one of lines.
func within(a, b int, lines []Line) bool {
	have := map[int]bool{}
	for _, l := range lines {
		have[l.N] = true
	}
	for i := a; i <= b; i++ {
		if !have[i] {
			return false
		}
	}
	return a <= b
}
