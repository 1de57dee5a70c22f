package verify

import (
	"fmt"
	"math/bits"
	"regexp"
	"sort"
	"strings"
	"sync"

	"kpatch/unwind"
	"kpatch/verify/cunit"
)

var ccRules = []Rule{
	{ID: "STUB_PARITY", Severity: Error,
		Why:   "a missing or mistyped stub breaks the build with the option off, which only randconfig bots find",
		check: checkStubParity},
	{ID: "CACHE_PAGE", Severity: Error, Scope: SeriesScope,
		Why:   "the per-task cache is one 4K allocation: one entry too many makes every traced task allocate two pages",
		check: checkCachePage},
	{ID: "RESERVED_BITS", Severity: Error, Scope: SeriesScope,
		Why:   "a tracer handed a reserved bit of the mask (PENDING) corrupts the deferral state of every task",
		check: checkReservedBits},
	{ID: "FRAME_LAYOUT", Severity: Error, Scope: SeriesScope,
		Why:   "the kernel's frame description must be the one the reference walker checks traces against, on both ABIs",
		check: checkFrameLayout},
	cEvalRule,
}

// cEvalRule reports what the C checks could not evaluate, so that a check
// never passes by not running.
var cEvalRule = Rule{ID: "C_EVAL", Severity: Warning,
	Why: "verify could not evaluate this C with cc/v4: the checks that need it did not run"}

// evalFailed reports a C evaluation failure (once per file and message
// in a run, whichever rule met it).
func (c *checker) evalFailed(p *Patch, file string, err error) {
	msg, _, _ := strings.Cut(err.Error(), "\n") // cc/v4 lists every follow-on error
	msg = ccSourceRE().ReplaceAllString(msg, "")
	c.evalFinding("eval "+file+" "+msg, p, file, 0, msg)
}

// unreadable reports, once per run, a definition of path (name, first
// line start) or the whole file (name "") that cc/v4 could not parse: the
// reason, and that the checks on it did not run. A definition, or a file,
// stays the same one over the patches, builds and rules that fail on it.
func (c *checker) unreadable(p *Patch, path, name string, start int, err error) {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	msg = ccSourceRE().ReplaceAllString(msg, "")
	if name == "" { // once per file, whatever the build
		c.evalFinding("unreadable "+path, p, path, 0,
			fmt.Sprintf("could not be parsed (%s): the C checks on this file did not run", msg))
		return
	}
	c.evalFinding("unreadable "+path+" "+name, p, path, start,
		fmt.Sprintf("%s() could not be parsed (%s): the checks on its body did not run (its uses still count)", name, msg))
}

// evalFinding records a C_EVAL finding under key for the run; of the
// findings with one key the earliest patch's is kept (at the first line,
// the first message in sort order), so that the report does not depend on
// which rule or build met the failure first.
func (c *checker) evalFinding(key string, p *Patch, file string, line int, msg string) {
	if c.ignore["C_EVAL"] {
		return
	}
	f := Finding{ID: cEvalRule.ID, Severity: cEvalRule.Severity, File: file, Line: line, Message: msg, Why: cEvalRule.Why, Source: "verify"}
	if p != nil {
		f.Patch, f.Subject = p.Number, p.Subject
	}
	es := c.evals
	es.mu.Lock()
	defer es.mu.Unlock()
	if old, ok := es.m[key]; ok && (old.Patch < f.Patch || old.Patch == f.Patch && (old.Line < f.Line || old.Line == f.Line && old.Message <= f.Message)) {
		return
	}
	es.m[key] = f
}

// evalSet is the C_EVAL findings of a run, by what failed (see
// evalFinding).
type evalSet struct {
	mu sync.Mutex
	m  map[string]Finding
}

// findings returns the C_EVAL findings of the run.
func (es *evalSet) findings() []Finding {
	es.mu.Lock()
	defer es.mu.Unlock()
	var out []Finding
	for _, k := range sortedKeys(es.m) {
		out = append(out, es.m[k])
	}
	return out
}

// ccSourceRE is the position in cc/v4's own source some of its messages carry.
var ccSourceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` \(\w+\.go:\d+:\w+:\)`) })

// evalDeferred evaluates exprs with cc/v4 after the preprocessor
// directives of kernel/unwind/deferred.c (src) at patch p on ABI e; a
// failure is reported as C_EVAL and gives ok false.
func (c *checker) evalDeferred(p *Patch, e cunit.Env, src []byte, exprs []string) (v []uint64, ok bool) {
	ast, err := c.units.Translate(p.Number, e, deferredC, cunit.Directives(src), cunit.EvalTail(exprs))
	if err == nil {
		v, err = cunit.Values(ast, len(exprs))
	}
	if err != nil {
		c.evalFailed(p, deferredC, fmt.Errorf("%s: %w", e, err))
		return nil, false
	}
	return v, true
}

// changedAt reports whether patch p changes one of paths with a known
// result.
func changedAt(p *Patch, paths ...string) bool {
	for _, f := range p.Files {
		for _, q := range paths {
			if f.Path == q && f.Known && !f.Deleted {
				return true
			}
		}
	}
	return false
}

// lineOf returns the first line of c that matches re, or 0.
func lineOf(c []byte, re *regexp.Regexp) int {
	if loc := re.FindIndex(c); loc != nil {
		return 1 + strings.Count(string(c[:loc[0]]), "\n")
	}
	return 0
}

// ifdefRE is the #ifdef or #if of a configuration option.
var ifdefRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^#\s*(?:ifdef\s+(CONFIG_\w+)|if\s+(?:defined\s*\(?\s*|IS_ENABLED\s*\(\s*)(CONFIG_\w+)\s*\)?\s*$)`)
})

// condBlock is an "#ifdef CONFIG_X ... #else ... #endif" at the top level
// of a header (inside its guard).
type condBlock struct {
	option           string
	ifLine, elseLine int // lines of the #ifdef and the #else
	endLine          int
}

func condBlocks(c []byte) []condBlock {
	type open struct {
		b     condBlock
		isOpt bool
	}
	var stack []open
	var out []condBlock
	for i, l := range strings.Split(string(c), "\n") {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "#") {
			continue
		}
		d := strings.TrimSpace(strings.TrimPrefix(t, "#"))
		switch {
		case strings.HasPrefix(d, "if"):
			o := open{}
			if m := ifdefRE().FindStringSubmatch("#" + d); m != nil {
				o.isOpt = true
				o.b = condBlock{option: m[1] + m[2], ifLine: i + 1}
			}
			stack = append(stack, o)
		case strings.HasPrefix(d, "else"):
			if len(stack) > 0 {
				stack[len(stack)-1].b.elseLine = i + 1
			}
		case strings.HasPrefix(d, "elif"):
			if len(stack) > 0 {
				stack[len(stack)-1].isOpt = false
			}
		case strings.HasPrefix(d, "endif"):
			if len(stack) == 0 {
				continue
			}
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if o.isOpt && o.b.elseLine > 0 {
				o.b.endLine = i + 1
				out = append(out, o.b)
			}
		}
	}
	return out
}

// without returns defines without d.
func without(defs []string, d string) []string {
	var out []string
	for _, x := range defs {
		if x != d {
			out = append(out, x)
		}
	}
	return out
}

func checkStubParity(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if !f.Known || f.Deleted || !strings.HasSuffix(f.Path, ".h") || !isC(f.Path) || !c.s.created[f.Path] {
				continue
			}
			blocks := condBlocks(f.New)
			if len(blocks) == 0 {
				continue
			}
			for _, e := range cunit.Envs()[:2] { // both ABIs; the option itself is switched below
				for _, b := range blocks {
					onEnv, offEnv := e, e
					onEnv.Defines = append(without(e.Defines, b.option), b.option)
					offEnv.Defines = without(e.Defines, b.option)
					astOn, err := c.units.Translate(p.Number, onEnv, f.Path, f.New, "")
					if err != nil {
						c.evalFailed(p, f.Path, fmt.Errorf("%s with %s: %w", e, b.option, err))
						continue
					}
					astOff, err := c.units.Translate(p.Number, offEnv, f.Path, f.New, "")
					if err != nil {
						c.evalFailed(p, f.Path, fmt.Errorf("%s without %s: %w", e, b.option, err))
						continue
					}
					on, off := map[string]cunit.FuncType{}, map[string]cunit.FuncType{}
					for n, ft := range cunit.Functions(astOn, f.Path) {
						if ft.Line > b.ifLine && ft.Line < b.elseLine {
							on[n] = ft
						}
					}
					for n, ft := range cunit.Functions(astOff, f.Path) {
						if ft.Line > b.elseLine && ft.Line < b.endLine {
							off[n] = ft
						}
					}
					for _, n := range sortedKeys(on) {
						ft := on[n]
						st, ok := off[n]
						switch {
						case !ok:
							if !c.calledWithout(f.Path, n, b) {
								continue // every caller is under the option: no stub is needed
							}
							if c.once(fmt.Sprintf("stub %s %s missing", f.Path, n)) {
								c.report(p, f.Path, ft.Line, "%s() is declared under %s but the #else branch (line %d) has no stub: add \"static inline\" %s with the same type", n, b.option, b.elseLine, n)
							}
						case st.Type != ft.Type:
							if c.once(fmt.Sprintf("stub %s %s type %s %s", f.Path, n, ft.Type, st.Type)) {
								c.report(p, f.Path, st.Line, "the stub of %s() has type %s, but with %s it is %s (%s): give the stub the same parameters and result", n, st.Type, b.option, ft.Type, e.Name)
							}
						}
					}
					for _, n := range sortedKeys(off) {
						if _, ok := on[n]; !ok && c.once(fmt.Sprintf("stub %s %s extra", f.Path, n)) {
							c.report(p, f.Path, off[n].Line, "the #else branch of %s defines %s(), which %s does not declare: the branch only stubs what the option declares", b.option, n, b.option)
						}
					}
				}
			}
		}
	}
}

// calledWithout reports whether a C file of the series at its end (a
// later patch may add the caller that needs the stub) calls
// name where b's option may be off: outside the branch of header that
// declares it, and outside any #if or #ifdef whose condition names the
// option (before its #else). A line that starts with no indentation
// declares or defines name and is no call. When the series calls it and
// every call is under the option, the declaration needs no stub (6.12's
// kernel/sched/ext.h declares init_scx_entity() only under
// CONFIG_SCHED_CLASS_EXT: core.c calls it under the same #ifdef); a
// function the series never calls is an interface for code outside it,
// which may call it with the option off.
func (c *checker) calledWithout(header, name string, b condBlock) bool {
	n := len(c.s.Patches)
	called := false // seen a call under the option
	call := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*\(`)
	for _, path := range c.seriesCode() {
		content, ok := c.s.FileAt(path, n)
		if !ok || !call.Match(content) {
			continue
		}
		hb := b // the header's branch, where it is at the end
		if path == header {
			hb = condBlock{}
			for _, x := range condBlocks(content) {
				if x.option == b.option {
					hb = x
				}
			}
		}
		under := optionLines(content, b.option)
		for i, l := range strings.Split(string(cunit.CodeOnly(content)), "\n") {
			if !call.MatchString(l) || l == "" || (l[0] != ' ' && l[0] != '\t') {
				continue
			}
			if path == header && i+1 > hb.ifLine && i+1 < hb.elseLine || under[i+1] {
				called = true
				continue
			}
			return true
		}
	}
	return !called
}

// optionLines returns the lines of c that are compiled only with option
// on: inside an #if or #ifdef whose condition names it (and not negated),
// up to its #else, #elif or #endif.
func optionLines(c []byte, option string) map[int]bool {
	out := map[int]bool{}
	var stack []bool // whether each open conditional's current branch needs the option
	needs := func() bool {
		for _, s := range stack {
			if s {
				return true
			}
		}
		return false
	}
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(option) + `\b`)
	for i, l := range strings.Split(string(c), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			d := strings.TrimSpace(strings.TrimPrefix(t, "#"))
			switch {
			case strings.HasPrefix(d, "ifndef"):
				stack = append(stack, false)
			case strings.HasPrefix(d, "if"):
				cond := d[2:]
				stack = append(stack, word.MatchString(cond) && !strings.Contains(cond, "!") && !strings.Contains(cond, "||"))
			case strings.HasPrefix(d, "el"):
				if len(stack) > 0 {
					stack[len(stack)-1] = false
				}
			case strings.HasPrefix(d, "endif"):
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
			continue
		}
		if needs() {
			out[i+1] = true
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

const (
	deferredC     = "kernel/unwind/deferred.c"
	deferredH     = "include/linux/unwind_deferred.h"
	deferredTypes = "include/linux/unwind_deferred_types.h"
	x86UnwindUser = "arch/x86/include/asm/unwind_user.h"
)

var maxEntriesRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^#\s*define\s+UNWIND_MAX_ENTRIES\b`) })
var cacheStructRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`struct\s+unwind_cache\s*\{`) })

// checkCachePage evaluates, on both ABIs, the bytes the per-task cache
// takes: sizeof(struct unwind_cache) plus UNWIND_MAX_ENTRIES longs (or
// only the entries before the cache struct exists).
func checkCachePage(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		if !changedAt(p, deferredC, deferredTypes, deferredH) {
			continue
		}
		src, ok := c.s.FileAt(deferredC, p.Number)
		if !ok {
			continue
		}
		line := lineOf(src, maxEntriesRE())
		if line == 0 {
			continue
		}
		types, _ := c.s.FileAt(deferredTypes, p.Number)
		exprs := []string{"(UNWIND_MAX_ENTRIES) * sizeof(unsigned long)", "UNWIND_MAX_ENTRIES", "0"}
		if cacheStructRE().Match(types) {
			exprs[0] = "sizeof(struct unwind_cache) + " + exprs[0]
			exprs[2] = "sizeof(struct unwind_cache)"
		}
		for _, e := range cunit.Envs()[:2] {
			v, ok := c.evalDeferred(p, e, src, exprs)
			if !ok {
				continue
			}
			if v[0] > 4096 && c.once(fmt.Sprintf("cache %s %d", e.Name, v[0])) {
				c.report(p, deferredC, line, "on %s the per-task cache takes %d bytes (%d for struct unwind_cache + %d entries of %d), over a 4K page: derive UNWIND_MAX_ENTRIES from SZ_4K and sizeof(long)",
					e.Name, v[0], v[2], v[1], e.Bits/8)
			}
		}
	}
}

var (
	reservedBitRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^#\s*define\s+(UNWIND_\w+_BIT)\b`) })
	ebusyRE       = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\s*if\s*\((\w+)\s*==\s*(.+)\)\s*\n\s*return -EBUSY;`)
	})
	ffzRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`=\s*ffz\((\w+)\)`) })
)

// checkReservedBits simulates the tracer-bit allocation of
// unwind_deferred_init() on both ABIs with the values cc/v4 evaluates:
// starting from the mask's initial value, ffz() hands out bits until the
// mask equals the -EBUSY test's constant; no reserved bit (UNWIND_*_BIT)
// may be handed out.
func checkReservedBits(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		if !changedAt(p, deferredC, deferredH) {
			continue
		}
		src, ok := c.s.FileAt(deferredC, p.Number)
		if !ok {
			continue
		}
		hdr, _ := c.s.FileAt(deferredH, p.Number)
		var reserved []string
		for _, m := range reservedBitRE().FindAllSubmatch(append(append([]byte{}, hdr...), src...), -1) {
			reserved = append(reserved, string(m[1]))
		}
		m := ebusyRE().FindSubmatchIndex(src)
		if len(reserved) == 0 || m == nil {
			continue
		}
		maskVar, limit := string(src[m[2]:m[3]]), string(src[m[4]:m[5]])
		line := 1 + strings.Count(string(src[:m[0]]), "\n")
		if fm := ffzRE().FindSubmatch(src); fm == nil || string(fm[1]) != maskVar {
			continue // not the allocation this check models
		}
		init := "0"
		if im := regexp.MustCompile(`static unsigned long ` + maskVar + `\s*=\s*([^;]+);`).FindSubmatch(src); im != nil {
			init = string(im[1])
		}
		exprs := []string{"(unsigned long)(" + limit + ")", "(unsigned long)(" + init + ")"}
		for _, r := range reserved {
			exprs = append(exprs, "BIT("+r+")")
		}
		for _, e := range cunit.Envs()[:2] {
			v, ok := c.evalDeferred(p, e, src, exprs)
			if !ok {
				continue
			}
			full := uint64(1)<<e.Bits - 1
			if e.Bits == 64 {
				full = ^uint64(0)
			}
			var rmask uint64
			for _, r := range v[2:] {
				rmask |= r
			}
			mask, handed := v[1]&full, 0
			for mask != v[0]&full {
				if mask == full {
					if c.once(fmt.Sprintf("bits full %s", e.Name)) {
						c.report(p, deferredC, line, "on %s the mask fills up before %s == %s: ffz() of a full mask is undefined; end the allocation with -EBUSY when only reserved bits are left", e.Name, maskVar, limit)
					}
					break
				}
				b := bits.TrailingZeros64(^mask)
				if rmask&(1<<b) != 0 {
					if c.once(fmt.Sprintf("bits %s %d", e.Name, b)) {
						c.report(p, deferredC, line, "on %s, after %d tracers ffz(%s) hands out bit %d, which is reserved (%s): the -EBUSY test must fire when every unreserved bit is taken, e.g. %s == ~(%s)",
							e.Name, handed, maskVar, b, strings.Join(reserved, ", "), maskVar, strings.Join(bitNames(reserved), " | "))
					}
					break
				}
				mask |= 1 << b
				handed++
			}
		}
	}
}

func bitNames(rs []string) []string {
	var out []string
	for _, r := range rs {
		out = append(out, strings.TrimSuffix(r, "_BIT"))
	}
	return out
}

var frameDefineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^#\s*define\s+(ARCH_INIT_USER_\w*FRAME)\b`) })

// checkFrameLayout evaluates the x86 frame macros with cc/v4 (package
// unwind's evaluator) at every patch that changes them: on x86_64 with
// IA32 emulation the 64-bit and compat frames, on i386 the native frame,
// each equal to the reference walker's.
func checkFrameLayout(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		if !changedAt(p, x86UnwindUser) {
			continue
		}
		hdr, _ := c.s.FileAt(x86UnwindUser, p.Number)
		if !frameDefineRE().Match(hdr) {
			continue
		}
		lines := map[string]int{}
		for _, m := range frameDefineRE().FindAllSubmatchIndex(hdr, -1) {
			lines[string(hdr[m[2]:m[3]])] = 1 + strings.Count(string(hdr[:m[0]]), "\n")
		}
		for _, e := range []struct {
			name string
			env  unwind.MacroEnv
			want map[string]unwind.Frame
		}{
			{"x86_64", unwind.X86_64Env, map[string]unwind.Frame{
				"ARCH_INIT_USER_FP_FRAME": unwind.FrameX86_64, "ARCH_INIT_USER_COMPAT_FP_FRAME": unwind.FrameX86Compat}},
			{"i386", unwind.MacroEnv{Arch: "386", Defines: []string{"CONFIG_X86_32"}}, map[string]unwind.Frame{
				"ARCH_INIT_USER_FP_FRAME": unwind.X86Frame(4)}},
		} {
			frames, err := unwind.ParseFrameMacrosEnv(hdr, e.env)
			if err != nil {
				c.evalFailed(p, x86UnwindUser, fmt.Errorf("%s: %w", e.name, err))
				continue
			}
			for _, n := range sortedKeys(e.want) {
				got, ok := frames[n]
				if !ok {
					continue // not defined in this build (yet)
				}
				if want := e.want[n]; got != want && c.once(fmt.Sprintf("frame %s %s %v", e.name, n, got)) {
					c.report(p, x86UnwindUser, lines[n], "on %s %s is %v, the walker uses %v: the kernel would record other frames than the ones checked", e.name, n, got, want)
				}
			}
		}
	}
}
