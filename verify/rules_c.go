package verify

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"kpatch/verify/cunit"

	"regexp"
)

var cRules = []Rule{
	{ID: "HEADER_GUARD", Severity: Error, Scope: SeriesScope,
		Why:   "a guard outside its directory's namespace (_LINUX_, _ASM_GENERIC_, _ASM_X86_) can collide with another header's and silently hide it",
		check: checkHeaderGuards},
	guardNameRule, // reported by checkHeaderGuards
	taskCurrentRule,
	unusedStaticRule,
	unusedConstRule,  // reported by checkUnusedStatic
	unusedInlineRule, // reported by checkUnusedStatic
	unusedMacroRule,  // reported by checkUnusedStatic
	noinstrRule,
	noinstrAccessRule,
	{ID: "X86_PREFIX", Severity: Error, Scope: SeriesScope,
		Why:   "x86 maintainers want x86-internal helpers made global to say so: x86_ keeps them apart from generic and KVM names",
		check: checkX86Prefix},
	{ID: "MOVE_CHANGES_BODY", Severity: Error,
		Why:   "a change hidden in a move or rename escapes review, and the subject no longer says what the patch does",
		check: checkMoveBody},
	moveDescribedRule, // reported by checkMoveBody
}

var moveDescribedRule = Rule{ID: "MOVE_AND_CHANGE", Severity: Warning,
	Why: "a function moved (or made out of line) and changed in one patch is reviewed as one diff: even when the message describes the change, reviewers may ask for the move alone first"}

var guardNameRule = Rule{ID: "HEADER_GUARD_NAME", Severity: Warning, Scope: SeriesScope,
	Why: "guards named after the file let readers and scripts find the header from the guard"}

// guardNamespace returns the namespace a header's guard must start with
// and the guard that follows its path, or "" for headers outside the
// kernel's guard conventions.
func guardNamespace(p string) (ns, want string) {
	base := strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(path.Base(p)))
	switch {
	case strings.HasPrefix(p, "include/linux/"):
		ns = "_LINUX_"
	case strings.HasPrefix(p, "include/asm-generic/"):
		ns = "_ASM_GENERIC_"
	case strings.HasPrefix(p, "arch/") && strings.Contains(p, "/include/asm/"):
		arch := strings.Split(p, "/")[1]
		ns = "_ASM_" + strings.ToUpper(arch) + "_"
	default:
		return "", ""
	}
	rel := p[strings.Index(p, "/include/")+1:]
	if strings.HasPrefix(p, "include/") {
		rel = p
	}
	rel = strings.TrimPrefix(rel, "include/")
	rel = rel[strings.IndexByte(rel, '/')+1:] // below linux/, asm/, asm-generic/
	if dir := path.Dir(rel); dir != "." {
		base = strings.ToUpper(strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(dir)) + "_" + base
	}
	return ns, ns + base
}

var guardRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#\s*ifndef\s+(\w+)\s*$`) })
var defineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#\s*define\s+(\w+)\s*$`) })

// headerGuard returns the guard of a header, the line of its #ifndef, and
// whether the next directive #defines it.
func headerGuard(c []byte) (guard string, line int, ok bool) {
	lines := strings.Split(string(c), "\n")
	inComment := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if inComment {
			if strings.Contains(t, "*/") {
				inComment = false
			}
			continue
		}
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		if strings.HasPrefix(t, "/*") {
			inComment = !strings.Contains(t, "*/")
			continue
		}
		m := guardRE().FindStringSubmatch(t)
		if m == nil {
			return "", 0, false
		}
		for _, n := range lines[i+1:] {
			if strings.TrimSpace(n) == "" {
				continue
			}
			d := defineRE().FindStringSubmatch(strings.TrimSpace(n))
			return m[1], i + 1, d != nil && d[1] == m[1]
		}
		return m[1], i + 1, false
	}
	return "", 0, false
}

func addedAt(f *File, line int) bool {
	for _, l := range f.Added {
		if l.N == line {
			return true
		}
	}
	return false
}

func checkHeaderGuards(c *checker) {
	nameRule := guardNameRule
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			ns, want := guardNamespace(f.Path)
			if ns == "" || !strings.HasSuffix(f.Path, ".h") || f.Deleted {
				continue
			}
			if !f.Known {
				continue
			}
			guard, line, ok := headerGuard(f.New)
			if !f.Created && !addedAt(f, max(line, 1)) {
				continue // not this patch's doing
			}
			switch {
			case guard == "":
				c.report(p, f.Path, 1, "no include guard (#ifndef %s / #define %s at the top): add one", want, want)
			case !ok:
				c.report(p, f.Path, line, "#ifndef %s is not followed by #define %s, so it guards nothing: define the same name", guard, guard)
			case !strings.HasPrefix(guard, ns):
				c.report(p, f.Path, line, "include guard %s is not in %s's namespace %s...: name it %s", guard, path.Dir(f.Path), ns, want)
			case guard != want:
				saved := c.rule
				c.rule = nameRule
				c.report(p, f.Path, line, "include guard %s does not follow the path: name it %s", guard, want)
				c.rule = saved
			}
		}
	}
}

// checkX86Prefix reports functions that a patch gives external linkage
// in arch/x86 (defines or declares without static, cc/v4's storage class)
// under a name without x86_, unless the name was global before the patch.
func checkX86Prefix(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		wasGlobal := map[string]bool{}
		for _, f := range p.Files {
			if !isC(f.Path) {
				continue
			}
			for _, fn := range c.funcsAt(p, f.Path, cunit.Before) {
				if !fn.Static {
					wasGlobal[fn.Name] = true
				}
			}
			for _, d := range c.declsAt(p, f.Path, cunit.Before) {
				if !d.Static {
					wasGlobal[d.Name] = true
				}
			}
		}
		reported := map[string]bool{}
		flag := func(f *File, name string, line int, what string) {
			if reported[name] || wasGlobal[name] || !strings.HasPrefix(f.Path, "arch/x86/") || !addedAt(f, line) ||
				strings.HasPrefix(name, "x86_") || strings.HasPrefix(name, "arch_") || strings.HasPrefix(name, "__x86_") {
				return
			}
			reported[name] = true
			c.report(p, f.Path, line, "%s() is %s global in arch/x86 without the x86_ prefix: name it x86_%s()", name, what, name)
		}
		for _, f := range p.Files {
			if strings.HasSuffix(f.Path, ".c") {
				for _, fn := range c.funcsAt(p, f.Path, cunit.After) {
					if !fn.Static {
						flag(f, fn.Name, fn.Line, "made")
					}
				}
			}
		}
		for _, f := range p.Files {
			if strings.HasSuffix(f.Path, ".h") && isC(f.Path) {
				for _, d := range c.declsAt(p, f.Path, cunit.After) {
					if !d.Static {
						flag(f, d.Name, d.Line, "declared")
					}
				}
			}
		}
	}
}

// movedFunc is a function a patch removes or adds whole.
type movedFunc struct {
	name, file string
	start, end int // the definition's first and last line
	body       []cunit.Line
}

// defines reports whether line n of file is a line of m's definition.
func (m movedFunc) defines(file string, n int) bool {
	return file == m.file && n >= m.start && n <= m.end
}

// checkMoveBody pairs the functions a patch removes whole with the ones it
// adds whole (same name, or a rename the patch applies to the callers, or
// mostly the same body) and reports, once per move, the lines of the new
// body that the old one lacks. When the commit message names the function
// and does not call the patch a move or rename (amd-tlb's "queue up ...
// flushes from arch_tlbbatch_add_pending" while making it out of line),
// the change is described: MOVE_AND_CHANGE, a warning.
func checkMoveBody(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		var removed, added []movedFunc
		for _, f := range p.Files {
			if !isC(f.Path) {
				continue
			}
			for _, fn := range c.funcsAt(p, f.Path, cunit.Before) {
				if within(fn.Start, fn.End, f.Removed) {
					removed = append(removed, movedFunc{fn.Name, f.Path, fn.Start, fn.End, stripComments(fn.Body())})
				}
			}
			for _, fn := range c.funcsAt(p, f.Path, cunit.After) {
				if within(fn.Start, fn.End, f.Added) {
					added = append(added, movedFunc{fn.Name, f.Path, fn.Start, fn.End, stripComments(fn.Body())})
				}
			}
		}
		if len(removed) == 0 || len(added) == 0 {
			continue
		}
		renames := renamesOf(p)
		follow := func(r, a movedFunc) bool { return callersFollow(p, r, a) }
		for _, m := range pairMoves(removed, added, renames, follow) {
			r, a := m.r, m.a
			if a.file == r.file && a.name == r.name {
				continue // an edit in place is not a move
			}
			extra := newLines(r.body, a.body, withDescribedRenames(p, renames, r, a))
			if len(extra) == 0 {
				continue
			}
			what := "moves"
			if a.name != r.name {
				what = fmt.Sprintf("renames %s() to", r.name)
			}
			changed := fmt.Sprintf("%q", strings.TrimSpace(extra[0].Text))
			if len(extra) > 1 {
				changed = fmt.Sprintf("%d lines, %s to line %d", len(extra), changed, extra[len(extra)-1].N)
			}
			if describesChange(p, r.name, a.name) || statesChange(p, extra) {
				saved := c.rule
				c.rule = moveDescribedRule
				c.report(p, a.file, extra[0].N, "the patch %s %s() (from %s) and changes its body (%s), as its message says: reviewers may ask for the move in a patch of its own", what, a.name, r.file, changed)
				c.rule = saved
				continue
			}
			c.report(p, a.file, extra[0].N, "the patch %s %s() (from %s) and also changes its body (%s): make that a separate patch", what, a.name, r.file, changed)
		}
	}
}

// movePair is a function a patch removes and the one it adds in its place.
type movePair struct{ r, a movedFunc }

// pairMoves pairs the functions a patch removes whole with those it adds
// whole, one to one: first by name (an edit in place, or a move), then by
// a rename the patch applies to the callers, then by the most alike
// bodies (at least 60% of the removed one's lines), earlier ones first on
// a tie. A show() moved with its store() is paired with its own show().
// Two functions of different names are paired only when follow says the
// removed one's callers call the added one after the patch: a function
// replaced by a new one whose body is alike is no rename.
func pairMoves(removed, added []movedFunc, renames map[string]string, follow func(r, a movedFunc) bool) []movePair {
	var out []movePair
	usedR, usedA := make([]bool, len(removed)), make([]bool, len(added))
	pair := func(i, j int) {
		usedR[i], usedA[j] = true, true
		out = append(out, movePair{removed[i], added[j]})
	}
	for _, sameFile := range []bool{true, false} { // an edit in place before a move of a same-named function
		for i, r := range removed {
			for j, a := range added {
				if !usedR[i] && !usedA[j] && a.name == r.name && (a.file == r.file) == sameFile {
					pair(i, j)
				}
			}
		}
	}
	for i, r := range removed {
		for j, a := range added {
			if !usedR[i] && !usedA[j] && renames[r.name] == a.name && follow(r, a) {
				pair(i, j)
			}
		}
	}
	type cand struct {
		i, j int
		sim  float64
	}
	var cands []cand
	for i, r := range removed {
		for j, a := range added {
			if usedR[i] || usedA[j] {
				continue
			}
			if sim := similar(r.body, a.body); sim >= 0.6 && (a.name == r.name || follow(r, a)) {
				cands = append(cands, cand{i, j, sim})
			}
		}
	}
	sort.SliceStable(cands, func(x, y int) bool { return cands[x].sim > cands[y].sim })
	for _, c := range cands {
		if !usedR[c.i] && !usedA[c.j] {
			pair(c.i, c.j)
		}
	}
	return out
}

// moveWordRE is a commit message's word for a move or a rename.
var moveWordRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(move[ds]?|moving|renam(e[ds]?|ing)|relocat(e[ds]?|ing))\b`)
})

// describesChange reports whether p's commit message describes a change
// of the moved function (named from or to): it names it, and its subject
// does not present the patch as a move or a rename.
func describesChange(p *Patch, from, to string) bool {
	if moveWordRE().MatchString(p.Subject) {
		return false
	}
	msg := p.Subject + "\n" + p.Log
	for _, name := range []string{from, to} {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(msg) {
			return true
		}
	}
	return false
}

// statesChange reports whether p's commit message says what the changed
// lines of a moved function do: a name those lines use (or a part of one,
// five letters or more, "probe" of xxx_probe_yyy) is a word of the
// message ("separate the probes"), beyond the words every C function has,
// and the subject does not present the patch as a move. The change is
// then the patch's stated purpose: MOVE_AND_CHANGE.
func statesChange(p *Patch, extra []cunit.Line) bool {
	if moveWordRE().MatchString(p.Subject) {
		return false // presented as a move: the change rides along (v11's x86 patch 13)
	}
	words := map[string]bool{}
	for _, w := range msgWordRE().FindAllString(strings.ToLower(p.Subject+"\n"+p.Log), -1) {
		words[w] = true
		words[strings.TrimSuffix(w, "s")] = true
	}
	for _, l := range extra {
		for _, id := range identRE().FindAllString(l.Text, -1) {
			if words[strings.ToLower(id)] && len(id) >= 4 && !commonCWords[strings.ToLower(id)] {
				return true
			}
			for _, part := range strings.Split(strings.ToLower(id), "_") {
				if len(part) >= 5 && words[part] && !commonCWords[part] {
					return true
				}
			}
		}
	}
	return false
}

var (
	msgWordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-z][a-z0-9_]*`) })
	identRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z_]\w*`) })
)

// commonCWords are words of C code and of commit messages alike, which
// say nothing of what a change does.
var commonCWords = map[string]bool{"return": true, "struct": true, "static": true, "const": true, "unsigned": true,
	"void": true, "char": true, "long": true, "sizeof": true, "while": true, "break": true, "else": true, "goto": true,
	"error": true, "data": true, "device": true, "value": true, "count": true, "index": true, "false": true, "true": true,
	"null": true, "this": true, "that": true, "with": true, "from": true, "into": true, "when": true, "there": true,
	"which": true, "function": true, "functions": true, "move": true, "moves": true, "moved": true, "code": true}

// callersFollow reports whether a patch that removes r and adds a moves
// r's callers to a, as a rename does: every line of the files it changes
// that names r outside r's own definition before the patch (a call, a
// declaration, an ops table's entry) is there after it naming a instead,
// outside a's definition, comments and spacing aside, and no line inside
// a block (a call, an initializer) names a that did not name r: a rename
// adds no caller; what it may add is at file scope (the declaration and
// the export of a function it makes global). BBRv3's
// bbr_advance_cycle_phase() is removed with its callers and a new function
// with an alike body is added with callers of its own: not a rename; so
// is bbr_lt_bw_sampling(), whose two calls have alike lines that call
// bbr_handle_inflight_too_high(), which has a third.
func callersFollow(p *Patch, r, a movedFunc) bool {
	if r.name == a.name {
		return true
	}
	before, after, inside := map[string]int{}, map[string]int{}, map[string]int{}
	named := func(name string) *regexp.Regexp { return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`) }
	rRE, aRE := named(r.name), named(a.name)
	for _, f := range p.Files {
		if !isC(f.Path) || f.refused {
			continue
		}
		for _, l := range stripComments(textLines(f.Old)) {
			if rRE.MatchString(l.Text) && !r.defines(f.Path, l.N) {
				before[normLine(l.Text, nil)]++
			}
		}
		for _, l := range stripComments(textLines(f.New)) {
			if aRE.MatchString(l.Text) && !a.defines(f.Path, l.N) {
				k := normLine(aRE.ReplaceAllString(l.Text, r.name), nil)
				after[k]++
				if l.Text != "" && (l.Text[0] == ' ' || l.Text[0] == '\t') {
					inside[k]++
				}
			}
		}
	}
	for l, n := range before {
		if after[l] < n {
			return false
		}
		after[l] -= n
		inside[l] = max(0, inside[l]-n)
	}
	for _, n := range inside {
		if n > 0 {
			return false // a caller more than before
		}
	}
	return true
}

// textLines splits text into its lines, numbered from 1.
func textLines(text []byte) []cunit.Line {
	if len(text) == 0 {
		return nil
	}
	parts := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	out := make([]cunit.Line, len(parts))
	for i, t := range parts {
		out[i] = cunit.Line{N: i + 1, Text: t}
	}
	return out
}

// withDescribedRenames returns renames with the identifiers renamed
// inside a moved function (localRenames) that p's message names, the old
// name or the new: "rename its variable tmp to val" makes no line of
// the body a change. A rename the message does not describe still is.
func withDescribedRenames(p *Patch, renames map[string]string, r, a movedFunc) map[string]string {
	local := localRenames(r.body, a.body)
	if len(local) == 0 {
		return renames
	}
	msg := p.Subject + "\n" + p.Log
	out := make(map[string]string, len(renames)+len(local))
	for from, to := range renames {
		out[from] = to
	}
	for from, to := range local {
		if _, ok := out[from]; ok {
			continue
		}
		for _, name := range []string{from, to} {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(msg) {
				out[from] = to
				break
			}
		}
	}
	return out
}

// localRenames finds the identifiers renamed inside a moved function: a
// line of the old body and one of the new that differ in that identifier
// alone, where the old name is nowhere in the new body and the new name
// nowhere in the old (a local variable renamed throughout, not one line
// that uses another variable).
func localRenames(r, a []cunit.Line) map[string]string {
	ident := identRE()
	names := func(body []cunit.Line) map[string]bool {
		out := map[string]bool{}
		for _, l := range body {
			for _, id := range ident.FindAllString(l.Text, -1) {
				out[id] = true
			}
		}
		return out
	}
	inR, inA := names(r), names(a)
	out := map[string]string{}
	for _, lr := range r {
		for _, la := range a {
			from, to, ok := oneIdentRenamed(normLine(lr.Text, nil), normLine(la.Text, nil))
			if ok && !inA[from] && !inR[to] {
				if prev, seen := out[from]; !seen || prev == to {
					out[from] = to
				}
			}
		}
	}
	return out
}

// oneIdentRenamed reports whether line b is line a with one identifier,
// from, replaced by another, to, and nothing else changed.
func oneIdentRenamed(a, b string) (from, to string, ok bool) {
	ident := identRE()
	ai, bi := ident.FindAllString(a, -1), ident.FindAllString(b, -1)
	if len(ai) != len(bi) || len(ai) == 0 {
		return "", "", false
	}
	diff := 0
	for i := range ai {
		if ai[i] != bi[i] {
			diff++
			from, to = ai[i], bi[i]
		}
	}
	if diff != 1 || ident.ReplaceAllString(a, "") != ident.ReplaceAllString(b, "") {
		return "", "", false
	}
	return from, to, true
}

// renamesOf finds renames a patch applies to call sites: a removed line and
// an added line that differ in one identifier.
func renamesOf(p *Patch) map[string]string {
	out := map[string]string{}
	for _, f := range p.Files {
		for _, r := range f.Removed {
			for _, a := range f.Added {
				if from, to, ok := oneIdentRenamed(r.Text, a.Text); ok {
					out[from] = to
				}
			}
		}
	}
	return out
}

// normLine is a line of a body as a move is judged: its spacing one
// blank (comments are left out before, see stripComments), and with
// rename (renameFunc) the renames the patch applies to its callers made.
func normLine(s string, rename func(string) string) string {
	s = strings.Join(strings.Fields(s), " ")
	if rename != nil {
		s = rename(s)
	}
	return s
}

// renameFunc makes every rename of renames in a line at once, the same
// way on every run (a map's order is not), or is nil for none.
func renameFunc(renames map[string]string) func(string) string {
	if len(renames) == 0 {
		return nil
	}
	froms := make([]string, 0, len(renames))
	for from := range renames {
		froms = append(froms, regexp.QuoteMeta(from))
	}
	sort.Strings(froms)
	re := regexp.MustCompile(`\b(?:` + strings.Join(froms, "|") + `)\b`)
	return func(s string) string { return re.ReplaceAllStringFunc(s, func(w string) string { return renames[w] }) }
}

// stripComments returns lines with their C comments blanked, a comment
// that runs over several lines included, and string and character
// literals kept: a moved function whose only change is in a comment (a
// typo fixed) is moved unchanged.
func stripComments(lines []cunit.Line) []cunit.Line {
	out := make([]cunit.Line, len(lines))
	inBlock := false
	for k, l := range lines {
		var b strings.Builder
		t := l.Text
		for i := 0; i < len(t); i++ {
			switch {
			case inBlock:
				if strings.HasPrefix(t[i:], "*/") {
					inBlock = false
					i++
					b.WriteByte(' ')
				}
			case strings.HasPrefix(t[i:], "/*"):
				inBlock = true
				i++
			case strings.HasPrefix(t[i:], "//"):
				i = len(t)
			case t[i] == '"' || t[i] == '\'':
				q := t[i]
				b.WriteByte(q)
				for i++; i < len(t) && t[i] != q; i++ {
					if t[i] == '\\' && i+1 < len(t) {
						b.WriteByte(t[i])
						i++
					}
					b.WriteByte(t[i])
				}
				if i < len(t) {
					b.WriteByte(q)
				}
			default:
				b.WriteByte(t[i])
			}
		}
		out[k] = cunit.Line{N: l.N, Text: b.String()}
	}
	return out
}

// similar returns the share of a's non-blank lines that b has; 0 when a
// has fewer than three.
func similar(a, b []cunit.Line) float64 {
	have := map[string]int{}
	for _, l := range b {
		have[normLine(l.Text, nil)]++
	}
	n, same := 0, 0
	for _, l := range a {
		t := normLine(l.Text, nil)
		if t == "" || t == "{" || t == "}" {
			continue
		}
		n++
		if have[t] > 0 {
			have[t]--
			same++
		}
	}
	if n < 3 { // one or two lines ("return 0;") do not make two functions the same
		return 0
	}
	return float64(same) / float64(n)
}

// newLines returns the non-blank lines of body a that body r lacks, by a
// longest common subsequence of the normalized lines.
func newLines(r, a []cunit.Line, renames map[string]string) []cunit.Line {
	rename := renameFunc(renames)
	x := make([]string, len(r))
	for i, l := range r {
		x[i] = normLine(l.Text, rename)
	}
	y := make([]string, len(a))
	for i, l := range a {
		y[i] = normLine(l.Text, rename)
	}
	// lcs[i][j] = LCS of x[i:], y[j:]
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []cunit.Line
	i, j := 0, 0
	for j < len(y) {
		switch {
		case i < len(x) && x[i] == y[j]:
			i++
			j++
		case i < len(x) && lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			if y[j] != "" {
				out = append(out, a[j])
			}
			j++
		}
	}
	return out
}

var taskCurrentRule = Rule{ID: "TASK_CURRENT", Severity: Error, Scope: SeriesScope,
	Why:   "a function given a task must act on that task: reading current's state instead is wrong whenever the caller passes another task",
	check: checkTaskCurrent}

// checkTaskCurrent reports the uses of current that a patch adds to a
// function with a struct task_struct * parameter (cc/v4's parameter list
// and identifiers: a comment or a string does not count).
func checkTaskCurrent(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if !isC(f.Path) || len(f.Added) == 0 {
				continue
			}
			for _, fn := range c.funcsAt(p, f.Path, cunit.After) {
				task, ok := fn.Param("struct task_struct *")
				if !ok || task.Name == "current" {
					continue
				}
				lines := map[int]bool{}
				for _, r := range fn.Idents {
					if r.Name == "current" && addedAt(f, r.Line) && !lines[r.Line] {
						lines[r.Line] = true
						c.report(p, f.Path, r.Line, "%s() is given a task (%s) but reads current: use %s instead", fn.Name, task.Name, task.Name)
					}
				}
			}
		}
	}
}

var unusedStaticRule = Rule{ID: "UNUSED_STATIC", Severity: Error,
	Why:   "the kernel build warns about a static function or variable its file does not use (-Wunused-function, -Wunused-variable): with -Werror the step does not build and bisection breaks",
	check: checkUnusedStatic}

var unusedConstRule = Rule{ID: "UNUSED_CONST", Severity: Warning,
	Why: "gcc reports a static const variable its file does not use only with W=1 (-Wunused-const-variable), which the kernel test robot builds: reviewers ask for it in the patch that first uses it"}

var unusedInlineRule = Rule{ID: "UNUSED_INLINE", Severity: Warning,
	Why: "a helper introduced before its use is reviewed without its caller: reviewers ask for it in the patch that first calls it (the compiler does not warn about an unused static inline function)"}

var unusedMacroRule = Rule{ID: "UNUSED_MACRO", Severity: Warning,
	Why: "a macro introduced before its use is reviewed without its user (-Wunused-macros, which only W=2 enables)"}

// checkUnusedStatic reports, at the patch that adds them, what the kernel
// build would warn about: a static, not inline, function or variable of a
// .c file that the file does not use (UNUSED_STATIC, an error). As advice
// it reports a static inline function of a header the series creates that
// no file of the series uses yet (UNUSED_INLINE: introduced before use;
// API stubs of an #else branch and arch hooks excepted) and function-like
// macros of a .c file that the file does not expand (UNUSED_MACRO).
//
// cc/v4 says what is defined, static and inline; whether the file uses a
// name is decided on the file's code (comments and strings left out), so
// that a use the parse cannot see (a definition it could not read, a macro
// argument such as module_init(fn)) still counts. __maybe_unused and
// __always_unused silence it, as they silence the compiler.
func checkUnusedStatic(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if !f.Known || len(f.Added) == 0 || f.Deleted {
				continue
			}
			dotC, isH := strings.HasSuffix(f.Path, ".c"), strings.HasSuffix(f.Path, ".h") && isC(f.Path) && c.s.created[f.Path]
			if !dotC && !isH || p.refusedIn(f.Path) {
				continue // a hunk git refuses may hold the use: verify cannot tell
			}
			units := c.unitsAt(p, f.Path, cunit.After)
			if dotC {
				c.unusedInFile(p, f, units)
				continue
			}
			c.unusedInline(p, f, units)
		}
	}
}

// unusedInFile reports the static functions, variables and macros patch p
// adds to the .c file f that f does not use.
func (c *checker) unusedInFile(p *Patch, f *File, units []*cunit.Unit) {
	code := cunit.CodeOnly(f.New)
	lines := strings.Split(string(code), "\n")
	protos := map[string][]int{} // the lines of each name's declarations: not uses
	for _, u := range units {
		for _, d := range u.Decls {
			protos[d.Name] = append(protos[d.Name], d.Line)
		}
	}
	silenced := func(from, to int) bool {
		for l := from; l <= to && l <= len(lines); l++ {
			if l >= 1 && maybeUnusedRE().MatchString(lines[l-1]) {
				return true
			}
		}
		return false
	}
	// A name is used when the file's code names it, or when the compiler's
	// view of the file does (a name a macro pastes together is used at the
	// macro's invocation); where a macro verify does not expand takes the
	// name's stem as argument, verify cannot tell and says nothing.
	refs := map[string][]int{}
	expanded := len(units) > 0
	for _, u := range units {
		for _, r := range u.Refs {
			refs[r.Name] = append(refs[r.Name], r.Line)
		}
		expanded = expanded && u.Expanded
	}
	var stems map[string]bool
	if !expanded {
		stems = macroStems(code)
	}
	pastes := pastedNames(code) // names the file's own macros paste where it invokes them
	unused := func(name string, from, to int) bool {
		if usesOutside(lines, name, from, to, protos[name]) > 0 || pastedFrom(name, stems) || pastes[name] {
			return false
		}
		for _, l := range refs[name] {
			if l < from || l > to {
				return false
			}
		}
		return true
	}
	for _, fn := range c.funcsAt(p, f.Path, cunit.After) {
		if !fn.Static || fn.Inline || !addedAt(f, fn.Line) || silenced(fn.Start, fn.Open) || !written(lines, fn.Name, fn.Line) {
			continue
		}
		if unused(fn.Name, fn.Start, fn.End) {
			c.report(p, f.Path, fn.Line, "static %s() is not used in this file at this patch (the build warns: defined but not used): add it in the patch that first calls it", fn.Name)
		}
	}
	seen := map[string]bool{}
	for _, u := range units {
		for _, v := range u.Vars {
			k := fmt.Sprintf("%s:%d", v.Name, v.Line)
			if !v.Static || seen[k] || !addedAt(f, v.Line) || silenced(v.Line, v.Line) || !written(lines, v.Name, v.Line) {
				continue
			}
			seen[k] = true
			if !unused(v.Name, v.Line, v.Line) {
				continue
			}
			if v.Const {
				saved := c.rule
				c.rule = unusedConstRule
				c.report(p, f.Path, v.Line, "static const variable %s is not used in this file at this patch (W=1 warns: -Wunused-const-variable): add it in the patch that first uses it", v.Name)
				c.rule = saved
				continue
			}
			c.report(p, f.Path, v.Line, "static variable %s is not used in this file at this patch (the build warns: defined but not used): add it in the patch that first uses it", v.Name)
		}
	}
	macros := map[int]string{} // cc/v4's function-like macros of the file, by line, in any build
	fields := map[int]bool{}   // of those, the register-field accessors
	for _, u := range units {
		for _, m := range u.Macros {
			macros[m.Line] = m.Name
			text := ""
			if m.Line >= 1 && m.Line <= len(lines) {
				text = lines[m.Line-1]
			}
			fields[m.Line] = registerField(m, text)
		}
	}
	saved := c.rule
	c.rule = unusedMacroRule
	defer func() { c.rule = saved }()
	// a macro a macro invocation may paste the name of (module_param(x,
	// t, m) expands param_check_t): -Wunused-macros sees the expansion,
	// verify's check of the text does not
	pasted := invocationArgs(code, true)
	for _, line := range sortedInts(macros) {
		name := macros[line]
		if addedAt(f, line) && wordLines(code, name, line) == 0 && !headerHooks[name] && !pastedFrom(name, pasted) && !pastes[name] && !fields[line] {
			c.report(p, f.Path, line, "macro %s() is not used at this patch: add it in the patch that first uses it", name)
		}
	}
}

// bitHelpers are the kernel's macros that describe a register's fields.
var bitHelpers = map[string]bool{"BIT": true, "BIT_ULL": true, "GENMASK": true, "GENMASK_ULL": true, "FIELD_PREP": true,
	"FIELD_GET": true, "FIELD_FIT": true, "FIELD_MAX": true, "u32_encode_bits": true, "u32_get_bits": true,
	"u16_encode_bits": true, "u8_encode_bits": true, "le32_encode_bits": true}

// registerField reports whether m, #defined on the line text, is a
// register-field accessor, as drivers define a register map whole (cxgb3's
// vsc8211.c: "#define V_ACSR_ACTIPHY_TMR(x) ((x) << S_ACSR_ACTIPHY_TMR)";
// extcon-rtk-type-c.c: "#define code_rp4pk(val) (((val) >> 22) & 0x1f)"):
// its replacement shifts or masks (or uses a bit helper) and names
// nothing but the bit helpers, constants in capitals and its short
// parameters. Reviewers take such a map whole, used or not.
func registerField(m cunit.Macro, text string) bool {
	for _, id := range m.Idents {
		if !bitHelpers[id] && strings.ToUpper(id) != id && len(id) > 3 {
			return false
		}
	}
	for _, id := range m.Idents {
		if bitHelpers[id] {
			return true
		}
	}
	return bitOpRE().MatchString(text)
}

// bitOpRE is a shift, or a mask with a constant.
var bitOpRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<<|>>|&\s*\(?\s*0[xX][0-9a-fA-F]+|0[xX][0-9a-fA-F]+\s*\)?\s*&`)
})

// macroStems returns the identifiers given, at file scope, to a macro
// whose expansion verify does not see: one the prelude does not define,
// the file does not #define (cc/v4 expands those) and that is not one of
// the kernel's declaration macros that take names whole (nonPasting).
// Such a macro may paste a name together from them, as
// CONFIGFS_ATTR(fsg_opts_, stall) pastes fsg_opts_stall_show.
func macroStems(code []byte) map[string]bool { return invocationArgs(code, false) }

// invocationArgs returns the identifiers given to file-scope macro
// invocations: of macros whose expansion verify does not see, or
// (withKnown) of every macro but those that take names whole.
func invocationArgs(code []byte, withKnown bool) map[string]bool {
	known := cunit.PreludeMacros()
	if withKnown {
		known = nil
	}
	defined := map[string]bool{}
	for _, m := range fnDefineRE().FindAllSubmatch(code, -1) {
		defined[string(m[1])] = true
	}
	out := map[string]bool{}
	// the invocations that start a line at file scope (outside braces):
	// a declaration macro written without its semicolon (static
	// DEF_SCSI_QCMD(x)) runs into what follows, so lines, not chunks
	depth := 0
	inInit := false // in the braces of a file-scope initializer ("... = {")
	for i := 0; i < len(code); {
		j := bytes.IndexByte(code[i:], '\n')
		if j < 0 {
			j = len(code) - i
		}
		line := code[i : i+j]
		if depth == 0 {
			if k := bytes.IndexByte(line, '{'); k >= 0 {
				inInit = bytes.Contains(line[:k], []byte("="))
			}
		}
		// an entry of an initializer made by a macro (amdgpu_pm.c's
		// AMDGPU_DEVICE_ATTR_RW(pp_dpm_vclk1, ...) in its attribute table
		// pastes amdgpu_get_pp_dpm_vclk1) counts as a file-scope invocation
		var m []int
		if depth == 0 {
			m = macroCallRE().FindSubmatchIndex(line)
		} else if inInit {
			m = initMacroRE().FindSubmatchIndex(line)
		}
		{
			if m != nil {
				name := string(line[m[2]:m[3]])
				if !known[name] && !defined[name] && !nonPasting[name] && !declKeywords[name] {
					open := i + m[1] - 1
					end := matchParen(string(code), open)
					if end > open && !bytes.HasPrefix(bytes.TrimLeft(code[end+1:], " \t\n"), []byte("{")) { // not a definition's declarator
						for _, w := range identWordRE().FindAll(code[open+1:end], -1) {
							if st := strings.Trim(string(w), "_"); len(st) > 1 {
								out[st] = true
							}
						}
					}
				}
			}
		}
		depth += bytes.Count(line, []byte("{")) - bytes.Count(line, []byte("}"))
		if depth < 0 {
			depth = 0
		}
		i += j + 1
	}
	return out
}

// initMacroRE is an initializer's entry that is a macro's invocation, in
// capitals as the kernel names macros that make table entries.
var initMacroRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([A-Z][A-Z0-9_]*)\s*\(`) })

// fnDefineRE is a function-like macro's #define.
var fnDefineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(`) })

// macroCallRE is a declaration that starts with a macro's invocation,
// after its storage class and qualifiers: "static DEVICE_ATTR_RW(".
var macroCallRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:(?:static|const|extern|__maybe_unused|__used)\s+)*([A-Za-z_]\w*)\s*\(`)
})

// declKeywords are the words that start a declaration but are no macro.
var declKeywords = map[string]bool{"struct": true, "union": true, "enum": true, "typeof": true, "__typeof__": true,
	"__attribute__": true, "_Static_assert": true, "static_assert": true, "asm": true, "__asm__": true}

// nonPasting are declaration macros of the kernel's headers that take
// the names they use whole (module_param(x, ...) uses x): their arguments
// are no stems.
var nonPasting = map[string]bool{"module_param_string": true, "core_param": true, "MODULE_PARM_DESC": true,
	"MODULE_DEVICE_TABLE": true, "MODULE_LICENSE": true, "MODULE_AUTHOR": true, "MODULE_DESCRIPTION": true,
	"MODULE_ALIAS": true, "MODULE_VERSION": true, "MODULE_FIRMWARE": true, "MODULE_IMPORT_NS": true,
	"MODULE_SOFTDEP": true, "EXPORT_SYMBOL_NS": true, "EXPORT_SYMBOL_NS_GPL": true, "DEFINE_MUTEX": true,
	"DEFINE_SPINLOCK": true, "DEFINE_RAW_SPINLOCK": true, "LIST_HEAD": true, "DEFINE_IDA": true, "DEFINE_IDR": true,
	"DEFINE_XARRAY": true, "DEFINE_XARRAY_ALLOC": true, "DEFINE_PER_CPU": true, "DECLARE_WORK": true,
	"DECLARE_DELAYED_WORK": true, "DECLARE_BITMAP": true, "DECLARE_WAIT_QUEUE_HEAD": true,
	"DEFINE_STATIC_KEY_FALSE": true, "DEFINE_STATIC_KEY_TRUE": true, "SIMPLE_DEV_PM_OPS": true,
	"DEFINE_SIMPLE_DEV_PM_OPS": true, "DEFINE_RUNTIME_DEV_PM_OPS": true, "module_platform_driver": true,
	"module_i2c_driver": true, "module_spi_driver": true, "module_usb_driver": true, "module_pci_driver": true,
	"module_driver": true, "builtin_platform_driver": true, "__setup": true, "early_param": true}

// pastedFrom reports whether name has one of stems as a part between
// underscores ("fsg_opts" and "stall" of "fsg_opts_stall_show").
func pastedFrom(name string, stems map[string]bool) bool {
	n := "_" + name + "_"
	for st := range stems {
		if strings.Contains(n, "_"+st+"_") {
			return true
		}
	}
	return false
}

// headerHooks are macros a file defines for the kernel headers it includes
// to expand (printk's pr_fmt, the device core's dev_fmt): their uses are
// in those headers.
var headerHooks = map[string]bool{"pr_fmt": true, "dev_fmt": true}

// maybeUnusedRE is the annotations that tell the compiler not to warn.
var maybeUnusedRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(__maybe_unused|__always_unused|__used|__attribute__\s*\(\(\s*_*(unused|used)_*)\b`)
})

// written reports whether name is written on line (not made by a macro's
// expansion, as module_init(fn) makes its initcall).
func written(lines []string, name string, line int) bool {
	return line >= 1 && line <= len(lines) && regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).MatchString(lines[line-1])
}

// usesOutside counts the lines of code (code split in lines) that have name
// as a word, outside lines from..to and the given declaration lines.
func usesOutside(lines []string, name string, from, to int, decls []int) int {
	skip := map[int]bool{}
	for _, d := range decls {
		skip[d] = true
	}
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	n := 0
	for i, l := range lines {
		if ln := i + 1; (ln < from || ln > to) && !skip[ln] && strings.Contains(l, name) && re.MatchString(l) {
			n++
		}
	}
	return n
}

// unusedInline reports the static inline functions patch p adds to f (a
// header the series creates) that no file of the series uses yet, with the
// patch that first does.
func (c *checker) unusedInline(p *Patch, f *File, units []*cunit.Unit) {
	declared := map[string]bool{} // extern declarations: an API with stubs
	for _, u := range units {
		for _, d := range u.Decls {
			if !d.Static {
				declared[d.Name] = true
			}
		}
	}
	saved := c.rule
	c.rule = unusedInlineRule
	defer func() { c.rule = saved }()
	for _, fn := range c.funcsAt(p, f.Path, cunit.After) {
		if !fn.Static || !fn.Inline || !addedAt(f, fn.Line) || declared[fn.Name] || strings.HasPrefix(fn.Name, "arch_") {
			continue
		}
		if c.usedBy(p, fn) || c.usedByTree(p, f.Path, fn.Name) || !c.once("static inline "+fn.Name) {
			continue
		}
		first := 0
		for _, q := range c.s.Patches[p.Number:] {
			if addsUse(q, fn) {
				first = q.Number
				break
			}
		}
		if first > 0 {
			c.report(p, f.Path, fn.Line, "static inline %s() is introduced before use: patch %d is the first to use it; consider adding it there", fn.Name, first)
		} else {
			c.report(p, f.Path, fn.Line, "static inline %s() is not used by any patch of the series", fn.Name)
		}
	}
}

// usedBy reports whether a file of the series uses fn at patch q: cc/v4's
// identifiers, or the name among the code lines the series added up to q
// (a use in a definition cc/v4 could not read), its own definition aside.
func (c *checker) usedBy(q *Patch, fn *cunit.Func) bool {
	if c.usesAt == nil {
		c.usesAt = map[int]map[string]int{}
	}
	uses, ok := c.usesAt[q.Number]
	if !ok {
		uses = c.seriesUses(q)
		c.usesAt[q.Number] = uses
	}
	if uses[fn.Name]-selfUses(fn) > 0 {
		return true
	}
	for _, r := range c.s.Patches[:q.Number] {
		if addsUse(r, fn) {
			return true
		}
	}
	return false
}

// addsUse reports whether patch r adds a code line that names fn, its own
// definition aside.
func addsUse(r *Patch, fn *cunit.Func) bool {
	var re *regexp.Regexp
	for _, f := range r.Files {
		if !isCode(f.Path) {
			continue
		}
		for _, l := range f.Added {
			if f.Path == fn.UnitPath && l.N >= fn.Start && l.N <= fn.End || !strings.Contains(l.Text, fn.Name) {
				continue
			}
			if re == nil {
				re = regexp.MustCompile(`\b` + regexp.QuoteMeta(fn.Name) + `\b`)
			}
			if re.Match(cunit.CodeOnly([]byte(l.Text))) {
				return true
			}
		}
	}
	return false
}

// sortedInts returns the keys of m in order.
func sortedInts[V any](m map[int]V) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// identUses counts the identifiers the units use, in bodies, file-scope
// initializers and the replacement lists of the macros they define (the
// most any one build uses).
func identUses(units []*cunit.Unit) map[string]int {
	out := map[string]int{}
	for _, u := range units {
		n := map[string]int{}
		for _, fn := range u.Funcs {
			for _, r := range fn.Idents {
				n[r.Name]++
			}
		}
		for _, r := range u.Uses {
			n[r.Name]++
		}
		for _, m := range u.Macros {
			for _, id := range m.Idents {
				n[id]++
			}
		}
		for k, v := range n {
			out[k] = max(out[k], v)
		}
	}
	return out
}

// selfUses counts the uses of fn's own name in its body (recursion).
func selfUses(fn *cunit.Func) int {
	n := 0
	for _, r := range fn.Idents {
		if r.Name == fn.Name {
			n++
		}
	}
	return n
}

// seriesUses counts the identifiers every file the series touches uses at
// patch p (of an edited file, the definitions the series touched).
func (c *checker) seriesUses(p *Patch) map[string]int {
	paths := map[string]bool{}
	for _, q := range c.s.Patches {
		c.stopped()
		for _, f := range q.Files {
			if isC(f.Path) {
				paths[f.Path] = true
			}
		}
	}
	out := map[string]int{}
	for _, path := range sortedKeys(paths) {
		if _, ok := c.s.FileAt(path, p.Number); !ok {
			// an edit known only by its hunks (mail without the tree):
			// the words of the lines the series added
			for _, q := range c.s.Patches[:p.Number] {
				if f := fileOf(q, path); f != nil {
					for _, l := range f.Added {
						for _, w := range identWordRE().FindAll(cunit.CodeOnly([]byte(l.Text)), -1) {
							out[string(w)]++
						}
					}
				}
			}
			continue
		}
		for k, v := range identUses(c.unitsQuiet(p, path)) {
			out[k] += v
		}
	}
	return out
}

var identWordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z_]\w*`) })

// unitsQuiet is unitsAt without reporting: for files p does not change.
func (c *checker) unitsQuiet(p *Patch, path string) []*cunit.Unit {
	var out []*cunit.Unit
	for _, e := range cunit.Envs() {
		if u := c.unit(path, p.Number, cunit.After, e); u != nil {
			out = append(out, u)
		}
	}
	return out
}

// wordLines counts the lines of code other than skip that have name as a
// word.
func wordLines(code []byte, name string, skip int) int {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	n := 0
	for i, l := range bytes.Split(code, []byte("\n")) {
		if i+1 != skip && re.Match(l) {
			n++
		}
	}
	return n
}
