package verify

import (
	"regexp"
	"sort"
	"strings"
)

var noinstrRule = Rule{ID: "NOINSTR_CALL", Severity: Error,
	Why:   "code after instrumentation_end() runs where tracing and sanitizers must not: a call that is not inlined leaves the noinstr section (objtool warns, and tracing it can crash)",
	check: checkNoinstrCalls}

var callRE = regexp.MustCompile(`\b([A-Za-z_]\w*)\s*\(`)

// cKeywords are not calls.
var cKeywords = map[string]bool{"if": true, "while": true, "for": true, "switch": true, "return": true, "sizeof": true, "do": true}

// seriesDefs finds the definitions of name in the files the series creates
// (at patch n): the declaration text before the body, and the body.
func (s *Series) seriesDefs(name string, n int) (decls, bodies []string, macro bool) {
	var paths []string
	for p := range s.created {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	def := regexp.MustCompile(`(?m)^([^\n;{}#]*\b)` + regexp.QuoteMeta(name) + `\s*\([^;{]*\)\s*\{`)
	mac := regexp.MustCompile(`(?m)^#\s*define\s+` + regexp.QuoteMeta(name) + `\(`)
	for _, p := range paths {
		c, ok := s.FileAt(p, n)
		if !ok {
			continue
		}
		if mac.Match(c) {
			macro = true
		}
		for _, m := range def.FindAllIndex(c, -1) {
			decl := string(c[m[0]:m[1]])
			body := matchBrace(string(c[m[1]-1:]))
			decls, bodies = append(decls, decl), append(bodies, body)
		}
	}
	return decls, bodies, macro
}

// matchBrace returns the balanced {...} block s starts with.
func matchBrace(s string) string {
	depth := 0
	for i, ch := range s {
		switch ch {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[:i+1]
			}
		}
	}
	return s
}

// checkNoinstrCalls looks at the lines a patch adds after
// instrumentation_end() in a function body (exit_to_user_mode() and any
// other): every function they call that the series defines must be
// __always_inline or noinstr, through the bodies of the always-inline
// ones (empty stubs excepted).
func checkNoinstrCalls(c *checker) {
	for _, p := range c.s.Patches {
		for _, f := range p.Files {
			if !isCode(f.Path) || !f.Known || len(f.Added) == 0 {
				continue
			}
			var lines []Line
			for i, l := range strings.Split(string(f.New), "\n") {
				lines = append(lines, Line{i + 1, l})
			}
			for _, fn := range funcsIn(f.Path, lines) {
				after := false
				for _, l := range fn.body {
					switch {
					case strings.Contains(l.Text, "instrumentation_end();"):
						after = true
						continue
					case strings.Contains(l.Text, "instrumentation_begin();"):
						after = false
					}
					if !after || !addedAt(f, l.N) {
						continue
					}
					for _, m := range callRE.FindAllStringSubmatch(l.Text, -1) {
						if why := c.s.instrumentable(m[1], p.Number, map[string]bool{}); why != "" {
							c.report(p, f.Path, l.N, "%s() calls %s() after instrumentation_end(): %s; make it __always_inline or noinstr, or call it before instrumentation_end()", fn.name, m[1], why)
						}
					}
				}
			}
		}
	}
}

// instrumentable says why calling name from a noinstr region is not safe,
// or "" when it is (or when the series does not define it).
func (s *Series) instrumentable(name string, n int, seen map[string]bool) string {
	if cKeywords[name] || seen[name] {
		return ""
	}
	seen[name] = true
	decls, bodies, macro := s.seriesDefs(name, n)
	if macro {
		return ""
	}
	for i, d := range decls {
		body := strings.TrimSpace(strings.Trim(strings.TrimSpace(bodies[i]), "{}"))
		if body == "" {
			continue // an empty stub is inlined
		}
		switch {
		case strings.Contains(d, "noinstr"):
			continue
		case strings.Contains(d, "__always_inline"):
			for _, m := range callRE.FindAllStringSubmatch(body, -1) {
				if why := s.instrumentable(m[1], n, seen); why != "" {
					return name + "() inlines " + m[1] + "(), and " + why
				}
			}
		default:
			return name + "() is neither __always_inline nor noinstr"
		}
	}
	return ""
}
