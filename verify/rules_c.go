package verify

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

var cRules = []Rule{
	{ID: "HEADER_GUARD", Severity: Error,
		Why:   "a guard outside its directory's namespace (_LINUX_, _ASM_GENERIC_, _ASM_X86_) can collide with another header's and silently hide it",
		check: checkHeaderGuards},
	guardNameRule, // reported by checkHeaderGuards
	taskCurrentRule,
	unusedStaticRule,
	noinstrRule,
	{ID: "X86_PREFIX", Severity: Error,
		Why:   "x86 maintainers want x86-internal helpers made global to say so: x86_ keeps them apart from generic and KVM names",
		check: checkX86Prefix},
	{ID: "MOVE_CHANGES_BODY", Severity: Error,
		Why:   "a change hidden in a move or rename escapes review, and the subject no longer says what the patch does",
		check: checkMoveBody},
}

var guardNameRule = Rule{ID: "HEADER_GUARD_NAME", Severity: Warning,
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

var guardRE = regexp.MustCompile(`^#\s*ifndef\s+(\w+)\s*$`)
var defineRE = regexp.MustCompile(`^#\s*define\s+(\w+)\s*$`)

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
		m := guardRE.FindStringSubmatch(t)
		if m == nil {
			return "", 0, false
		}
		for _, n := range lines[i+1:] {
			if strings.TrimSpace(n) == "" {
				continue
			}
			d := defineRE.FindStringSubmatch(strings.TrimSpace(n))
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

// checkX86Prefix reports functions that a patch makes global (defines or
// declares without static) in arch/x86 under a name without x86_.
func checkX86Prefix(c *checker) {
	for _, p := range c.s.Patches {
		wasGlobal := map[string]bool{}
		for _, f := range p.Files {
			for _, fn := range funcsIn(f.Path, f.Removed) {
				if fn.global {
					wasGlobal[fn.name] = true
				}
			}
			for _, l := range f.Removed {
				if m := protoRE.FindStringSubmatch(l.Text); m != nil && !strings.Contains(m[1], "static") {
					wasGlobal[m[2]] = true
				}
			}
		}
		reported := map[string]bool{}
		flag := func(f *File, name string, l Line, what string) {
			if reported[name] || wasGlobal[name] || !strings.HasPrefix(f.Path, "arch/x86/") ||
				strings.HasPrefix(name, "x86_") || strings.HasPrefix(name, "arch_") || strings.HasPrefix(name, "__x86_") {
				return
			}
			reported[name] = true
			c.report(p, f.Path, l.N, "%s() is %s global in arch/x86 without the x86_ prefix: name it x86_%s()", name, what, name)
		}
		for _, f := range p.Files {
			if strings.HasSuffix(f.Path, ".c") {
				for _, fn := range funcsIn(f.Path, f.Added) {
					if fn.global {
						flag(f, fn.name, fn.head, "made")
					}
				}
			}
		}
		for _, f := range p.Files {
			if strings.HasSuffix(f.Path, ".h") {
				for _, l := range f.Added {
					if m := protoRE.FindStringSubmatch(l.Text); m != nil && !strings.Contains(m[1], "static") {
						flag(f, m[2], l, "declared")
					}
				}
			}
		}
	}
}

// checkMoveBody pairs the functions a patch removes with the ones it adds
// (same name, or a rename the patch applies to the callers, or mostly the
// same body) and reports every line of the new body that the old one
// lacks.
func checkMoveBody(c *checker) {
	for _, p := range c.s.Patches {
		var removed, added []cfunc
		for _, f := range p.Files {
			if !isCode(f.Path) {
				continue
			}
			removed = append(removed, funcsIn(f.Path, f.Removed)...)
			added = append(added, funcsIn(f.Path, f.Added)...)
		}
		if len(removed) == 0 || len(added) == 0 {
			continue
		}
		renames := renamesOf(p)
		for _, r := range removed {
			for _, a := range added {
				if !(a.name == r.name || renames[r.name] == a.name || similar(r.body, a.body) >= 0.6) {
					continue
				}
				extra := newLines(r, a, renames)
				if len(extra) == 0 {
					continue
				}
				what := "moves"
				if a.name != r.name {
					what = fmt.Sprintf("renames %s() to", r.name)
				}
				if a.file == r.file && a.name == r.name {
					what = "rewrites"
				}
				if what == "rewrites" {
					continue // an edit in place is not a move
				}
				for _, l := range extra {
					c.report(p, a.file, l.N, "the patch %s %s() (from %s) and also changes its body: %q: make that a separate patch",
						what, a.name, r.file, strings.TrimSpace(l.Text))
				}
			}
		}
	}
}

// renamesOf finds renames a patch applies to call sites: a removed line and
// an added line that differ in one identifier.
func renamesOf(p *Patch) map[string]string {
	out := map[string]string{}
	ident := regexp.MustCompile(`[A-Za-z_]\w*`)
	for _, f := range p.Files {
		for _, r := range f.Removed {
			for _, a := range f.Added {
				ri, ai := ident.FindAllString(r.Text, -1), ident.FindAllString(a.Text, -1)
				if len(ri) != len(ai) || len(ri) == 0 {
					continue
				}
				diff := 0
				var from, to string
				for i := range ri {
					if ri[i] != ai[i] {
						diff++
						from, to = ri[i], ai[i]
					}
				}
				if diff == 1 && ident.ReplaceAllString(r.Text, "") == ident.ReplaceAllString(a.Text, "") {
					out[from] = to
				}
			}
		}
	}
	return out
}

func normLine(s string, renames map[string]string) string {
	s = strings.Join(strings.Fields(s), " ")
	for from, to := range renames {
		s = regexp.MustCompile(`\b`+regexp.QuoteMeta(from)+`\b`).ReplaceAllString(s, to)
	}
	return s
}

// similar returns the share of a's non-blank lines that b has.
func similar(a, b []Line) float64 {
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
	if n == 0 {
		return 0
	}
	return float64(same) / float64(n)
}

// newLines returns the non-blank lines of a's body that r's lacks, by a
// longest common subsequence of the normalized lines.
func newLines(r, a cfunc, renames map[string]string) []Line {
	x := make([]string, len(r.body))
	for i, l := range r.body {
		x[i] = normLine(l.Text, renames)
	}
	y := make([]string, len(a.body))
	for i, l := range a.body {
		y[i] = normLine(l.Text, renames)
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
	var out []Line
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
				out = append(out, a.body[j])
			}
			j++
		}
	}
	return out
}

var taskCurrentRule = Rule{ID: "TASK_CURRENT", Severity: Error,
	Why:   "a function given a task must act on that task: reading current's state instead is wrong whenever the caller passes another task",
	check: checkTaskCurrent}

var (
	taskParamRE = regexp.MustCompile(`struct\s+task_struct\s*\*\s*(\w+)\s*[,)]`)
	currentRE   = regexp.MustCompile(`\bcurrent\b`)
)

// checkTaskCurrent reports lines a patch adds to a function that takes a
// struct task_struct * and that read current instead.
func checkTaskCurrent(c *checker) {
	for _, p := range c.s.Patches {
		for _, f := range p.Files {
			if !isCode(f.Path) || len(f.Added) == 0 {
				continue
			}
			lines := f.Added
			if f.Known { // whole functions, so that a line added to an old one counts
				lines = nil
				for i, l := range strings.Split(string(f.New), "\n") {
					lines = append(lines, Line{i + 1, l})
				}
			}
			for _, fn := range funcsIn(f.Path, lines) {
				m := taskParamRE.FindStringSubmatch(fn.decl)
				if m == nil || m[1] == "current" {
					continue
				}
				for _, l := range fn.body {
					code, _, _ := strings.Cut(l.Text, "/*")
					code, _, _ = strings.Cut(code, "//")
					if currentRE.MatchString(code) && addedAt(f, l.N) {
						c.report(p, f.Path, l.N, "%s() is given a task (%s) but reads current: use %s instead", fn.name, m[1], m[1])
					}
				}
			}
		}
	}
}

var unusedStaticRule = Rule{ID: "UNUSED_STATIC", Severity: Error,
	Why:   "every step must build: a static function no one calls yet is a -Wunused-function error with W=1/-Werror and breaks bisection",
	check: checkUnusedStatic}

var fnMacroDefRE = regexp.MustCompile(`(?m)^#\s*define\s+(\w+)\(`)

// checkUnusedStatic reports static (not inline) functions and
// function-like macros a patch adds to a .c file that nothing in the file
// uses yet at that patch.
func checkUnusedStatic(c *checker) {
	for _, p := range c.s.Patches {
		for _, f := range p.Files {
			if !strings.HasSuffix(f.Path, ".c") || !f.Known || len(f.Added) == 0 {
				continue
			}
			text := string(f.New)
			var lines []Line
			for i, l := range strings.Split(text, "\n") {
				lines = append(lines, Line{i + 1, l})
			}
			uses := func(name string, def int) int {
				n := 0
				re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
				for _, l := range lines {
					if l.N != def && re.MatchString(l.Text) && !protoRE.MatchString(l.Text) {
						n++
					}
				}
				return n
			}
			for _, fn := range funcsIn(f.Path, lines) {
				if !fn.static || strings.Contains(fn.decl, "inline") || !addedAt(f, fn.head.N) {
					continue
				}
				if uses(fn.name, fn.head.N) == 0 {
					c.report(p, f.Path, fn.head.N, "static %s() is not used at this patch: add it in the patch that first calls it", fn.name)
				}
			}
			for _, m := range fnMacroDefRE.FindAllStringSubmatchIndex(text, -1) {
				name := text[m[2]:m[3]]
				line := 1 + strings.Count(text[:m[0]], "\n")
				if addedAt(f, line) && uses(name, line) == 0 {
					c.report(p, f.Path, line, "macro %s() is not used at this patch: add it in the patch that first uses it", name)
				}
			}
		}
	}
}
