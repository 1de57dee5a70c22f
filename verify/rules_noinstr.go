package verify

import (
	"bytes"
	"fmt"
	"strings"

	"kpatch/verify/cunit"
)

var noinstrRule = Rule{ID: "NOINSTR_CALL", Severity: Error,
	Why:   "code after instrumentation_end() runs where tracing and sanitizers must not: a call that is not inlined leaves the noinstr section (objtool warns, and tracing it can crash)",
	check: checkNoinstrCalls}

var noinstrAccessRule = Rule{ID: "NOINSTR_ACCESS", Severity: Error,
	Why:   "after instrumentation_end() KASAN and KCSAN must not run: an instrumented accessor calls into them from the non-instrumentable path (objtool: call to __kasan_check_*() leaves .noinstr.text section)",
	check: checkNoinstrAccess}

// noinstrEnvs are the builds the noinstr rules look at: with the options
// off the series' hooks are empty stubs.
func noinstrEnvs() []cunit.Env { return cunit.Envs()[:2] }

// link is a call on the way from a non-instrumentable region to what it
// reaches: the name called, where.
type link struct {
	name, file string
	line       int
}

// region is a call made where instrumentation is not allowed: after
// instrumentation_end() in a function, or outside an
// instrumentation_begin()/end() pair in a noinstr function.
type region struct {
	root *cunit.Func
	call cunit.Ref
}

// seriesFuncs indexes, by name, the functions defined at patch n in every
// C file the series touches (in build e) that the noinstr rules need: a
// file is parsed when it can hold a region or an inlined body (it mentions
// noinstr, instrumentation_end or __always_inline), or when it defines a
// function those files call. Which files those are is followed patch by
// patch (c.noinstr), so that a patch costs what it changes, not the size of
// the series; the rules ask for the patches in order.
func (c *checker) seriesFuncs(n int, e cunit.Env) map[string][]*cunit.Func {
	ix := c.noinstrAt(n)
	out := map[string][]*cunit.Func{}
	called := map[string]bool{}
	parsed := map[string]bool{}
	for _, path := range sortedKeys(ix.mention) {
		parsed[path] = true
		if u := c.unit(path, n, cunit.After, e); u != nil {
			for _, f := range u.Funcs {
				out[f.Name] = append(out[f.Name], f)
				for _, r := range f.Calls {
					called[r.Name] = true
				}
			}
		}
	}
	rest := map[string]bool{}
	for name := range called {
		for path := range ix.defines[name] {
			if !parsed[path] {
				rest[path] = true
			}
		}
	}
	for _, path := range sortedKeys(rest) {
		if u := c.unit(path, n, cunit.After, e); u != nil {
			for _, f := range u.Funcs {
				out[f.Name] = append(out[f.Name], f)
			}
		}
	}
	return out
}

// noinstrIndex is, at one patch, which C files of the series mention what
// makes a region or an inlined body, and which files define each function
// (of a file the series edits, the definitions it reads).
type noinstrIndex struct {
	n       int
	mention map[string]bool
	defines map[string]map[string]bool // function -> paths
	names   map[string][]string        // path -> the functions it defines
}

// noinstrAt brings c.noinstr to patch n, from the patch it is at (or from
// the start when n is before it).
func (c *checker) noinstrAt(n int) *noinstrIndex {
	if c.noinstr == nil || c.noinstr.n > n {
		c.noinstr = &noinstrIndex{mention: map[string]bool{}, defines: map[string]map[string]bool{}, names: map[string][]string{}}
	}
	ix := c.noinstr
	for k := ix.n + 1; k <= n && k <= len(c.s.Patches); k++ {
		for _, f := range c.s.Patches[k-1].Files {
			if !isC(f.Path) {
				continue
			}
			for _, name := range ix.names[f.Path] {
				delete(ix.defines[name], f.Path)
			}
			delete(ix.names, f.Path)
			delete(ix.mention, f.Path)
			in := c.units.Input(f.Path, k, cunit.After)
			if in == nil {
				continue
			}
			if mentionsAny(in.Blank, "noinstr", "instrumentation_end", "__always_inline") {
				ix.mention[f.Path] = true
			}
			for _, ch := range in.Keep {
				if !ch.Fn {
					continue
				}
				if ix.defines[ch.Name] == nil {
					ix.defines[ch.Name] = map[string]bool{}
				}
				ix.defines[ch.Name][f.Path] = true
				ix.names[f.Path] = append(ix.names[f.Path], ch.Name)
			}
		}
	}
	ix.n = max(ix.n, n)
	return ix
}

// seriesCode is every .c and .h file the series touches.
func (c *checker) seriesCode() []string {
	paths := map[string]bool{}
	for _, q := range c.s.Patches {
		c.stopped()
		for _, f := range q.Files {
			if isC(f.Path) {
				paths[f.Path] = true
			}
		}
	}
	return sortedKeys(paths)
}

// regions returns the calls made without instrumentation in the functions
// of defs.
func regions(defs map[string][]*cunit.Func) []region {
	var out []region
	for _, name := range sortedKeys(defs) {
		for _, fn := range defs[name] {
			if !fn.Noinstr && len(fn.InstrEnd) == 0 {
				continue
			}
			for _, r := range fn.Calls {
				if r.Name != "instrumentation_begin" && r.Name != "instrumentation_end" && !fn.Instrumented(r.Line, r.Col) {
					out = append(out, region{fn, r})
				}
			}
		}
	}
	return out
}

// inlinedCalls returns the calls of an __always_inline body that run
// without instrumentation once it is inlined into such a region: the ones
// outside its own instrumentation_begin()/end() pairs.
func inlinedCalls(fn *cunit.Func) []cunit.Ref {
	var out []cunit.Ref
	on := false
	for _, r := range fn.Calls {
		switch r.Name {
		case "instrumentation_begin":
			on = true
		case "instrumentation_end":
			on = false
		default:
			if !on {
				out = append(out, r)
			}
		}
	}
	return out
}

// emptyBody reports whether fn's body has nothing between its braces (a
// stub, inlined to nothing).
func emptyBody(fn *cunit.Func) bool {
	var b strings.Builder
	for _, l := range fn.Body() {
		b.WriteString(l.Text)
	}
	s := strings.TrimSpace(b.String())
	if i := strings.IndexByte(s, '{'); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndexByte(s, '}'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s) == "" && len(fn.Calls) == 0 && len(fn.Idents) == 0
}

func where(fn *cunit.Func) string {
	if fn.Noinstr {
		return "outside instrumentation_begin()/instrumentation_end() in noinstr code"
	}
	return "after instrumentation_end()"
}

// checkNoinstrCalls looks at the calls a patch adds where instrumentation
// is not allowed (after instrumentation_end() as in exit_to_user_mode(),
// or outside the instrumentation_begin()/end() pairs of a noinstr
// function): every function they call that the series defines must be
// __always_inline or noinstr, through the bodies of the always-inline ones
// (empty stubs excepted). Attributes are cc/v4's: noinstr is
// .noinstr.text, __always_inline the always_inline attribute.
func checkNoinstrCalls(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		if !changesCode(p) {
			continue
		}
		for _, e := range noinstrEnvs() {
			defs := c.seriesFuncs(p.Number, e)
			for _, r := range regions(defs) {
				f := fileOf(p, r.root.UnitPath)
				if f == nil || !addedAt(f, r.call.Line) {
					continue
				}
				why := outOfLine(defs, r.call.Name, map[string]bool{})
				if why != "" && c.once(fmt.Sprintf("%s %s %d %s", f.Path, r.root.Name, r.call.Line, r.call.Name)) {
					c.report(p, f.Path, r.call.Line, "%s() calls %s() %s: %s; make it __always_inline or noinstr, or call it before instrumentation_end()",
						r.root.Name, r.call.Name, where(r.root), why)
				}
			}
		}
	}
}

// outOfLine says why calling name from a non-instrumentable region leaves
// it, or "" when it does not (or when the series does not define it).
func outOfLine(defs map[string][]*cunit.Func, name string, seen map[string]bool) string {
	if seen[name] {
		return ""
	}
	seen[name] = true
	for _, d := range defs[name] {
		switch {
		case d.Noinstr, emptyBody(d):
			continue
		case d.AlwaysInline:
			for _, r := range inlinedCalls(d) {
				if why := outOfLine(defs, r.Name, seen); why != "" {
					return name + "() inlines " + r.Name + "(), and " + why
				}
			}
		default:
			return name + "() is neither __always_inline nor noinstr"
		}
	}
	return ""
}

func changesCode(p *Patch) bool {
	for _, f := range p.Files {
		if isCode(f.Path) {
			return true
		}
	}
	return false
}

// instrumentedAccess says whether a call of name is an accessor that KASAN
// and KCSAN instrument, and what to use instead where they must not run.
func instrumentedAccess(name string) (instead string, ok bool) {
	if rawAccessors[name] || strings.HasPrefix(name, "raw_") || strings.HasPrefix(name, "arch_") {
		return "", false
	}
	switch {
	case strings.HasPrefix(name, "atomic_") || strings.HasPrefix(name, "atomic64_") ||
		strings.HasPrefix(name, "atomic_long_"):
		return "raw_" + name + "()", true
	case cmpxchgAccessors[name]:
		return "raw_" + name + "()", true
	case bitopAccessors[name]:
		return "arch_" + name + "()", true
	case strings.HasPrefix(name, "local_") || strings.HasPrefix(name, "local64_"):
		return "", true // atomic_long_*/atomic64_* underneath, with no raw form of their own
	case strings.HasPrefix(name, "instrument_") || strings.HasPrefix(name, "kasan_check_") ||
		strings.HasPrefix(name, "__kasan_check_") || strings.HasPrefix(name, "kcsan_check_") ||
		strings.HasPrefix(name, "__kcsan_check_"):
		return "", true // the instrumentation itself
	case userAccessors[name]:
		return "", true // and it may fault
	}
	return "", false
}

// rawAccessors are names under the prefixes of instrumentedAccess that are
// not instrumented accessors.
var rawAccessors = map[string]bool{"local_irq_save": true, "local_irq_restore": true, "local_irq_disable": true,
	"local_irq_enable": true, "local_save_flags": true, "local_clock": true, "local_bh_disable": true, "local_bh_enable": true}

// cmpxchgAccessors are the instrumented cmpxchg and xchg forms
// (include/linux/atomic/atomic-instrumented.h).
var cmpxchgAccessors = map[string]bool{"xchg": true, "cmpxchg": true, "cmpxchg64": true, "cmpxchg128": true,
	"try_cmpxchg": true, "try_cmpxchg64": true, "try_cmpxchg128": true, "cmpxchg_local": true, "cmpxchg64_local": true,
	"cmpxchg128_local": true, "try_cmpxchg_local": true, "try_cmpxchg64_local": true, "try_cmpxchg128_local": true,
	"sync_cmpxchg": true, "sync_try_cmpxchg": true, "xchg_relaxed": true, "xchg_acquire": true, "xchg_release": true,
	"cmpxchg_relaxed": true, "cmpxchg_acquire": true, "cmpxchg_release": true, "try_cmpxchg_relaxed": true,
	"try_cmpxchg_acquire": true, "try_cmpxchg_release": true}

// bitopAccessors are the instrumented bit operations
// (include/asm-generic/bitops/instrumented-*.h and test_bit()).
var bitopAccessors = map[string]bool{"set_bit": true, "clear_bit": true, "change_bit": true, "__set_bit": true,
	"__clear_bit": true, "__change_bit": true, "test_and_set_bit": true, "test_and_clear_bit": true,
	"test_and_change_bit": true, "__test_and_set_bit": true, "__test_and_clear_bit": true,
	"__test_and_change_bit": true, "test_bit": true, "test_bit_acquire": true, "clear_bit_unlock": true,
	"__clear_bit_unlock": true, "test_and_set_bit_lock": true, "xor_unlock_is_negative_byte": true}

// userAccessors are the instrumented user-space accesses.
var userAccessors = map[string]bool{"copy_from_user": true, "copy_to_user": true, "__copy_from_user": true,
	"__copy_to_user": true, "get_user": true, "put_user": true, "__get_user": true, "__put_user": true,
	"copy_from_user_nofault": true, "copy_to_user_nofault": true, "strncpy_from_user": true, "clear_user": true,
	"__clear_user": true, "copy_from_user_inatomic": true, "__copy_from_user_inatomic": true}

// access is an instrumented accessor reached from a non-instrumentable
// region: the calls from the region's call to the accessor's.
type access struct {
	root     *cunit.Func
	chain    []link // the region's call first, the accessor's call last
	accessor string
}

// accesses returns the instrumented accessors that call r makes, directly
// or through the __always_inline functions the series defines.
func accesses(defs map[string][]*cunit.Func, r region) []access {
	var out []access
	var visit func(chain []link, seen map[string]bool)
	visit = func(chain []link, seen map[string]bool) {
		last := chain[len(chain)-1]
		if _, ok := instrumentedAccess(last.name); ok {
			out = append(out, access{r.root, append([]link(nil), chain...), last.name})
			return
		}
		if seen[last.name] {
			return
		}
		seen[last.name] = true
		defer delete(seen, last.name)
		for _, d := range defs[last.name] {
			if !d.AlwaysInline || d.Noinstr {
				continue // noinstr code is checked as a region of its own; other code is NOINSTR_CALL's
			}
			for _, c := range inlinedCalls(d) {
				visit(append(chain, link{c.Name, d.UnitPath, c.Line}), seen)
			}
		}
	}
	visit([]link{{r.call.Name, r.root.UnitPath, r.call.Line}}, map[string]bool{r.root.Name: true})
	return out
}

// checkNoinstrAccess reports the instrumented accessors (atomic_*,
// atomic_long_*, atomic64_*, the cmpxchg forms, the instrumented bitops,
// local_*/local64_*, instrument_*, kasan_check_*, kcsan_check_*, user
// accesses) that run where instrumentation is not allowed: called after
// instrumentation_end() (exit_to_user_mode()) or outside the
// instrumentation_begin()/end() pairs of a noinstr function, directly or
// through every __always_inline body the series defines, in x86_64 and
// i386 with the options on. Each is reported at the patch that adds a
// call of the chain (the accessor's own line when that patch adds it,
// else the nearest call it adds), once.
func checkNoinstrAccess(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		if !changesCode(p) {
			continue
		}
		for _, e := range noinstrEnvs() {
			defs := c.seriesFuncs(p.Number, e)
			for _, r := range regions(defs) {
				for _, a := range accesses(defs, r) {
					at := -1 // the last link (nearest the accessor) this patch adds
					for i, l := range a.chain {
						if f := fileOf(p, l.file); f != nil && addedAt(f, l.line) {
							at = i
						}
					}
					if at < 0 {
						continue // not this patch's doing (or the kernel's own code)
					}
					var names []string
					for _, l := range a.chain {
						names = append(names, l.name+"()")
					}
					if !c.once(a.root.Name + " " + strings.Join(names, " ")) {
						continue
					}
					via := ""
					if len(a.chain) > 1 {
						via = ", through " + strings.Join(names[:len(names)-1], " -> ") + ","
					}
					instead, _ := instrumentedAccess(a.accessor)
					fix := "do that work before instrumentation_end()"
					if a.root.Noinstr {
						fix = "do that work between instrumentation_begin() and instrumentation_end()"
					}
					if instead != "" {
						fix = "use " + instead + " there, or " + fix
					}
					l := a.chain[at]
					c.report(p, l.file, l.line, "%s() calls %s()%s %s: KASAN/KCSAN instrument it; %s",
						a.root.Name, a.accessor, via, where(a.root), fix)
				}
			}
		}
	}
}

func mentionsAny(src []byte, words ...string) bool {
	for _, w := range words {
		if bytes.Contains(src, []byte(w)) {
			return true
		}
	}
	return false
}
