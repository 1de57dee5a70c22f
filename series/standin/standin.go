package standin

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"kpatch/plumbing/kbuild"
	"kpatch/spec"
)

// FactsName is the spec's facts template (facts/base.tmpl) of what a
// revision needs of its base.
const FactsName = "base"

// Need is one thing a revision uses from its base tree.
type Need struct {
	Symbol string // what the revision uses: srcu_read_lock_lite
	Header string // where a base that has it declares it: include/linux/srcu.h
	Since  string // the first release that has it: v6.13
	// Defines are the stand-in, NAME=REPLACEMENT: an identifier for an
	// identifier (srcu_read_lock_lite=srcu_read_lock), or a function-like
	// macro for an expression without blanks, where the base has the
	// function under another form (f(a,b)=g((a),0,(b))).
	Defines []string
}

// String says what a build that used the stand-in did, in one line.
func (n Need) String() string {
	var ds []string
	for _, d := range n.Defines {
		name, repl, _ := strings.Cut(d, "=")
		ds = append(ds, name+" as "+repl)
	}
	return fmt.Sprintf("the base lacks %s (Linux %s, %s): the test build defines %s", n.Symbol, n.Since, n.Header, strings.Join(ds, ", "))
}

// Needs returns what r needs of its base after step patches, by symbol. A
// spec without facts/base.tmpl needs nothing.
func Needs(r *spec.Revision, step int) ([]Need, error) {
	if r == nil || r.Spec().Facts[FactsName] == nil {
		return nil, nil
	}
	facts, err := r.Facts(FactsName, step)
	if err != nil {
		return nil, err
	}
	var needs []Need
	for sym, v := range facts {
		f := strings.Fields(v)
		if len(f) < 3 || !strings.HasPrefix(f[1], "v") {
			return nil, fmt.Errorf("facts/%s.tmpl for v%d: %s: want \"HEADER SINCE NAME=REPLACEMENT ...\", got %q", FactsName, r.Version, sym, v)
		}
		n := Need{Symbol: sym, Header: f[0], Since: f[1]}
		for _, d := range f[2:] {
			name, repl, ok := strings.Cut(d, "=")
			if !ok || !validDefine(name, repl) {
				return nil, fmt.Errorf("facts/%s.tmpl for v%d: %s: want NAME=REPLACEMENT (C identifiers, or f(a,b)=EXPRESSION), got %q", FactsName, r.Version, sym, d)
			}
			n.Defines = append(n.Defines, d)
		}
		needs = append(needs, n)
	}
	sort.Slice(needs, func(i, j int) bool { return needs[i].Symbol < needs[j].Symbol })
	return needs, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isIdent(s string) bool { return identRE.MatchString(s) }

// macroRE is a function-like macro's name and parameters: f(a,b).
var macroRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\(([A-Za-z_][A-Za-z0-9_]*(?:,[A-Za-z_][A-Za-z0-9_]*)*)?\)$`)

// validDefine reports whether name=repl is a stand-in Block can write: an
// identifier for an identifier, or a function-like macro for an
// expression whose parentheses balance and that holds no statement.
func validDefine(name, repl string) bool {
	if isIdent(name) {
		return isIdent(repl)
	}
	if !macroRE.MatchString(name) || repl == "" || strings.ContainsAny(repl, ";{}\\\"'") {
		return false
	}
	depth := 0
	for _, c := range repl {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth < 0 {
			return false
		}
	}
	return depth == 0
}

// macroName returns the identifier a stand-in defines: f of f(a,b).
func macroName(name string) string {
	if m := macroRE.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return name
}

// Apply adds to files (path to content, the series' files as a test build
// syncs them) the stand-ins for what r needs after step patches and the
// base lacks, and returns those needs. base reads the base tree.
func Apply(r *spec.Revision, step int, files map[string][]byte, base kbuild.BaseFile) ([]Need, error) {
	needs, err := Needs(r, step)
	if err != nil {
		return nil, err
	}
	var used []Need
	for _, n := range needs {
		b, exists, err := base(n.Header)
		if err != nil {
			return nil, err
		}
		if exists && mentions(b, n.Symbol) {
			continue
		}
		content, ok := files[n.Header]
		if !ok {
			if !exists {
				return nil, fmt.Errorf("the base tree has no %s, where %s (Linux %s) would be: is --tree a Linux kernel tree?", n.Header, n.Symbol, n.Since)
			}
			content = b
		}
		files[n.Header] = append(Block(n), content...)
		used = append(used, n)
	}
	return used, nil
}

// Block is the text Apply puts at the top of n.Header.
func Block(n Need) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "/* kpatch test: stand-in for %s (Linux %s), which this base lacks */\n", n.Symbol, n.Since)
	for _, d := range n.Defines {
		name, repl, _ := strings.Cut(d, "=")
		fmt.Fprintf(&b, "#ifndef %s\n#define %s %s\n#endif\n", macroName(name), name, repl)
	}
	return []byte(b.String())
}

// mentions reports whether the C text b has the identifier sym.
func mentions(b []byte, sym string) bool {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(sym) + `\b`).Match(b)
}
