package hooks

import (
	"regexp"
	"sort"
	"strings"

	"kpatch/spec"
)

// How many candidates an AnchorError lists at most: lines alike, and the
// includes of a file.
const (
	maxCandidates = 5
	maxIncludes   = 12
)

// candidates returns the lines of the edit's file most like its missing
// anchor: for a statement, the statements of the function (or, when the
// function is missing, the functions of the file); for an include, the
// includes of the file; for a Kconfig symbol or config, the symbols of the
// file; for a struct member, the members of the struct (or the structs);
// for a function, the functions; for a line, the lines.
func candidates(files Files, e spec.Edit) []Candidate {
	path := e.Path
	data, err := files.Get(path)
	if err != nil {
		return nil
	}
	f := split(data)
	var want string // what the anchor looks for
	var pool []int  // the lines to choose from (0-based)
	text := func(i int) string { return strings.TrimSpace(f[i]) }
	functions := func(g lines) []int { return g.functionStarts() }
	switch Ops[e.Op].anchor {
	case anchorInclude:
		// All the includes of the file, in order, unless there are
		// many: then the most alike, still in order.
		pool = f.matching(func(l string) bool { return includeLine.MatchString(l) })
		if len(pool) > maxIncludes {
			want = e.Args[0]
			text = func(i int) string { return includeLine.ReplaceAllString(strings.TrimSpace(f[i]), "") }
			pool = mostAlike(pool, want, text, maxIncludes)
			sort.Ints(pool)
		}
		return f.candidates(files, path, pool)
	case anchorConfig:
		if e.Op == "select-sorted" && f.hasConfig(e.Args[0]) {
			return nil // the config is there, without selects
		}
		want = "config " + e.Args[0]
		pool = f.matching(func(l string) bool { return kconfigSymbol.MatchString(l) })
	case anchorStatement:
		sp, err := f.function(e.Args[0])
		if err != nil {
			want = e.Args[0] + "("
			pool = functions(f)
			text = func(i int) string { return functionName(f[i]) + "(" }
			break
		}
		want = e.Args[1]
		if identRE.MatchString(want) {
			want += "("
		}
		pool = f.statementsOf(sp)
	case anchorMember:
		start, err := f.unique(prefiltered(e.Args[0], regexp.MustCompile(`^struct\s+`+regexp.QuoteMeta(e.Args[0])+`\s*\{`)), 0, len(f))
		if err != nil {
			want = "struct " + e.Args[0] + " {"
			pool = f.matching(func(l string) bool { return structStart.MatchString(l) })
			break
		}
		want = e.Args[1] + ";"
		for i := start + 1; i < len(f) && !strings.HasPrefix(f[i], "}"); i++ {
			if t := text(i); strings.HasSuffix(t, ";") && !strings.HasPrefix(t, "/*") && !strings.HasPrefix(t, "*") {
				pool = append(pool, i)
			}
		}
		text = func(i int) string { return memberName(f[i]) + ";" }
	case anchorFunction:
		want = e.Args[0] + "("
		pool = functions(f)
		text = func(i int) string { return functionName(f[i]) + "(" }
		if e.Op == "move-function" {
			if _, err := f.function(e.Args[0]); err == nil {
				// The function is there: the destination's BEFORE is not.
				dd, err := files.Get(e.Args[1])
				if err != nil {
					return nil
				}
				path, f = e.Args[1], split(dd)
				want = e.Args[2] + "("
				pool = functions(f)
			}
		}
	case anchorLine:
		want = e.Args[0]
		pool = f.matching(func(l string) bool { return strings.TrimSpace(l) != "" })
		text = func(i int) string { return strings.TrimRight(f[i], "\n") }
	case anchorBlock:
		// The lines of the scope most like the first line the edit
		// changes; the functions of the file when the scope is missing.
		from, to, err := f.scope(e.Args[0])
		if err != nil {
			want = e.Args[0] + "("
			pool = functions(f)
			text = func(i int) string { return functionName(f[i]) + "(" }
			break
		}
		first, _, _ := strings.Cut(e.Args[1], "\n")
		want = strings.TrimSpace(first)
		for i := from; i < to; i++ {
			if strings.TrimSpace(f[i]) != "" {
				pool = append(pool, i)
			}
		}
	case anchorSortedLine:
		want = e.Args[0]
		pool = f.matching(func(l string) bool { return strings.TrimSpace(l) != "" })
		text = func(i int) string { return strings.TrimRight(f[i], "\n") }
	default:
		return nil
	}
	return f.candidates(files, path, mostAlike(pool, want, text, maxCandidates))
}

// candidates returns the lines as Candidates.
func (f lines) candidates(files Files, path string, pool []int) []Candidate {
	var out []Candidate
	for _, i := range pool {
		out = append(out, Candidate{File: path, Line: baseLine(files, path, i), Text: strings.TrimRight(f[i], "\n")})
	}
	return out
}

// mostAlike returns the n lines of pool whose text is most like want, the
// most alike first; lines with nothing in common are left out.
func mostAlike(pool []int, want string, text func(int) string, n int) []int {
	type scored struct {
		line  int
		score float64
	}
	var best []scored
	for _, i := range pool {
		if sc := similarity(want, text(i)); sc > 0 {
			best = append(best, scored{i, sc})
		}
	}
	sort.SliceStable(best, func(a, b int) bool { return best[a].score > best[b].score })
	if len(best) > n {
		best = best[:n]
	}
	out := make([]int, len(best))
	for i, b := range best {
		out[i] = b.line
	}
	return out
}

var (
	includeLine   = regexp.MustCompile(`^#\s*include\s`)
	kconfigSymbol = regexp.MustCompile(`^(menu)?config\s+\S`)
	structStart   = regexp.MustCompile(`^struct\s+[A-Za-z_][A-Za-z0-9_]*\s*\{`)
	funcNameRE    = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\(`)
	memberNameRE  = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^]]*\])?\s*(__[a-z_]+(\([^)]*\))?\s*)*;`)
)

// hasConfig reports whether the file has the entry of config sym.
func (f lines) hasConfig(sym string) bool {
	re := regexp.MustCompile(`^(menu)?config\s+` + regexp.QuoteMeta(sym) + `\s*$`)
	return len(f.matching(re.MatchString)) > 0
}

// matching returns the indexes of the lines that match.
func (f lines) matching(match func(string) bool) []int {
	var out []int
	for i, l := range f {
		if match(l) {
			out = append(out, i)
		}
	}
	return out
}

// functionStarts returns the first lines of the function definitions of
// the file, as function finds them.
func (f lines) functionStarts() []int {
	var out []int
	seen := map[string]bool{}
	for i, l := range f {
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' || l[0] == '/' || l[0] == '*' {
			continue
		}
		name := functionName(l)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		if sp, err := f.function(name); err == nil && sp.start == i {
			out = append(out, i)
		}
	}
	return out
}

// functionName returns the name of the function a definition's first line
// defines: the last name before "(" outside any earlier parenthesis.
func functionName(l string) string {
	m := funcNameRE.FindStringSubmatch(l)
	if m == nil {
		return ""
	}
	return m[1]
}

// memberName returns the name a struct member line declares.
func memberName(l string) string {
	m := memberNameRE.FindStringSubmatch(l)
	if m == nil {
		return strings.TrimSpace(l)
	}
	return m[1]
}

// statementsOf returns the lines of a function's body that start a
// statement: not blank, not a brace or a comment line, and not the
// continuation of the line above.
func (f lines) statementsOf(sp span) []int {
	var out []int
	open := false // the line above did not end its statement
	for i := sp.start + 1; i < sp.end-1; i++ {
		t := strings.TrimSpace(f[i])
		isComment := strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "//")
		if t == "" || t == "{" || t == "}" || isComment || strings.HasPrefix(t, "#") {
			continue
		}
		if !open {
			out = append(out, i)
		}
		open = !strings.HasSuffix(t, ";") && !strings.HasSuffix(t, "{") && !strings.HasSuffix(t, "}") && !strings.HasSuffix(t, ":")
	}
	return out
}

// similarity compares what an anchor looks for with a candidate line: the
// Dice coefficient of their character bigrams, the line cut to the
// anchor's length (an anchor is the start of a line) plus a little.
func similarity(want, line string) float64 {
	if n := len(want) + 8; len(line) > n {
		line = line[:n]
	}
	if len(want) < 2 || len(line) < 2 {
		if want == line {
			return 1
		}
		return 0
	}
	bigrams := map[string]int{}
	for i := 0; i+1 < len(want); i++ {
		bigrams[want[i:i+2]]++
	}
	common := 0
	for i := 0; i+1 < len(line); i++ {
		if bigrams[line[i:i+2]] > 0 {
			bigrams[line[i:i+2]]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(want)-1+len(line)-1)
}

// Adds reports whether text, what some edit inserts, has a line that the
// anchor of e looks for. When e's anchor is missing and an earlier edit
// that could not be placed Adds it, e fails only because of that edit.
func Adds(text string, e spec.Edit) bool {
	var match func(l string) bool
	definition := func(name string) func(string) bool {
		return func(l string) bool {
			return l != "" && l[0] != ' ' && l[0] != '\t' && l[0] != '#' && functionName(l) == name && !strings.HasSuffix(strings.TrimSpace(l), ";")
		}
	}
	if len(e.Args) == 0 {
		return false
	}
	switch Ops[e.Op].anchor {
	case anchorConfig:
		match = regexp.MustCompile(`^(menu)?config\s+` + regexp.QuoteMeta(e.Args[0]) + `\s*$`).MatchString
	case anchorInclude:
		match = includeOf(e.Args[0])
	case anchorStatement:
		if len(e.Args) < 2 {
			return false
		}
		prefix := e.Args[1]
		if identRE.MatchString(prefix) {
			prefix += "("
		}
		def := definition(e.Args[0])
		match = func(l string) bool { return def(l) || strings.HasPrefix(strings.TrimSpace(l), prefix) }
	case anchorMember:
		if len(e.Args) < 2 {
			return false
		}
		st := regexp.MustCompile(`^struct\s+` + regexp.QuoteMeta(e.Args[0]) + `\s*\{`)
		match = func(l string) bool {
			return st.MatchString(l) || memberName(l) == e.Args[1] && strings.HasSuffix(strings.TrimSpace(l), ";")
		}
	case anchorFunction:
		match = definition(e.Args[0])
		if e.Op == "move-function" && len(e.Args) == 4 {
			src, dest := definition(e.Args[0]), definition(e.Args[2])
			match = func(l string) bool { return src(l) || dest(l) }
		}
	case anchorLine:
		match = func(l string) bool { return l == e.Args[0] }
	default:
		return false
	}
	for _, l := range strings.Split(text, "\n") {
		if match(l) {
			return true
		}
	}
	return false
}
