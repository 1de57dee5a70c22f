package verify

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"kpatch/verify/cunit"
)

var nmiRule = Rule{ID: "NMI_UNSAFE", Severity: Error,
	Why:   "code that may run in NMI interrupts whatever the CPU was doing, with its locks held: a sleeping or non-raw lock, an allocation, a wakeup or a work queue taken from NMI deadlocks or corrupts that state, and task_work_add() may only use TWA_NMI_CURRENT there",
	check: checkNMI}

// nmiCall is a function that code running in NMI must not call, and why.
type nmiCall struct {
	why, instead string
}

// nmiUnsafe are the kernel functions code that may run in NMI must not
// call (docs/verify.md has the table, with what is allowed). A name not
// here and not defined by the series is not judged.
var nmiUnsafe = func() map[string]nmiCall {
	out := map[string]nmiCall{}
	add := func(c nmiCall, names ...string) {
		for _, n := range names {
			out[n] = c
		}
	}
	add(nmiCall{"a spinlock_t or rwlock_t the interrupted context may hold deadlocks (and sleeps on PREEMPT_RT)", "a raw_spinlock_t with raw_spin_trylock(), or irq_work to leave NMI"},
		"spin_lock", "spin_lock_irq", "spin_lock_irqsave", "spin_lock_bh", "spin_trylock", "spin_trylock_irqsave",
		"read_lock", "read_lock_irqsave", "write_lock", "write_lock_irqsave", "write_lock_irq", "read_lock_irq")
	add(nmiCall{"a mutex or semaphore may sleep", "irq_work to leave NMI first"},
		"mutex_lock", "mutex_lock_interruptible", "mutex_lock_killable", "mutex_trylock", "down", "down_interruptible",
		"down_killable", "down_trylock", "down_read", "down_write", "down_read_trylock", "down_write_trylock")
	add(nmiCall{"the slab and page allocators take locks: no allocation or free in NMI", "an allocation made before, outside NMI"},
		"kmalloc", "kzalloc", "kcalloc", "kmalloc_array", "krealloc", "kvmalloc", "kvzalloc", "kvcalloc", "vmalloc",
		"vzalloc", "kmem_cache_alloc", "kmem_cache_zalloc", "__get_free_pages", "get_zeroed_page", "alloc_pages",
		"kfree", "kvfree", "vfree", "kmem_cache_free", "free_pages", "kstrdup", "kmemdup")
	add(nmiCall{"work queues and timers take their base's lock", "irq_work_queue()"},
		"schedule_work", "queue_work", "queue_work_on", "queue_delayed_work", "mod_delayed_work", "schedule_delayed_work",
		"mod_timer", "add_timer", "del_timer", "timer_delete", "hrtimer_start")
	add(nmiCall{"a wakeup takes the wait queue's and the runqueue's locks", "irq_work_queue() and wake up from there"},
		"wake_up", "wake_up_all", "wake_up_interruptible", "wake_up_process", "complete", "complete_all")
	add(nmiCall{"RCU callbacks and grace periods, and srcu_read_lock(), are not NMI-safe", "srcu_read_lock_nmisafe(), or rcu_read_lock()"},
		"call_rcu", "synchronize_rcu", "synchronize_srcu", "srcu_read_lock", "srcu_read_unlock", "call_srcu")
	add(nmiCall{"it may sleep", "work done before, or irq_work"},
		"might_sleep", "might_fault", "msleep", "usleep_range", "schedule", "cond_resched")
	add(nmiCall{"a user access may fault and sleep", "copy_from_user_nofault()"},
		"copy_from_user", "copy_to_user", "get_user", "put_user", "__get_user", "__put_user", "strncpy_from_user")
	add(nmiCall{"it reads a seqcount that NMI may interrupt mid-update, and spins forever", "ktime_get_mono_fast_ns()"},
		"ktime_get", "ktime_get_ns", "ktime_get_real", "ktime_get_real_ns", "ktime_get_boottime", "ktime_get_boottime_ns")
	return out
}()

// nmiGuards are the lock guards (guard(x)(...), scoped_guard(x, ...)) code
// that may run in NMI must not take.
var nmiGuards = map[string]string{"mutex": "mutex_lock", "spinlock": "spin_lock", "spinlock_irq": "spin_lock_irq",
	"spinlock_irqsave": "spin_lock_irqsave", "read_lock": "read_lock", "write_lock": "write_lock", "srcu": "srcu_read_lock"}

var (
	canInNMIRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\w*_IN_NMI\b`) })
	// nmiMentionRE is what a file that can hold NMI code has.
	nmiMentionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bin_nmi\b|\bNMI\b|_IN_NMI\b`) })
	// nmiCommentRE is a comment that says the code runs in NMI.
	nmiCommentRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(called|used|run|runs|invoked|requested)\s+(from|in|within)\s+(an\s+|the\s+)?NMI\b|\bNMI[- ]safe\b|\bsafe\s+(to\s+call\s+)?(from|in)\s+(an\s+)?NMI\b|\bNMI requires\b|\bfrom NMI context\b`)
	})
	negationRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(not|never|cannot|no|can't|don't|mustn't|won't|aren't|isn't|without)\b`)
	})
	ifRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bif\s*\(`) })
	sentenceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[.;:]\s+|@\w+:`) })
	wrapRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(WARN_ON_ONCE|WARN_ON|unlikely|likely)\((.*)\)$`) })
	// nmiTerminal are the calls the walk does not follow: once there,
	// the kernel stops (panic() and the like manage NMI themselves).
	nmiTerminal = map[string]bool{"panic": true, "nmi_panic": true, "vpanic": true, "do_exit": true, "make_task_dead": true,
		"die": true, "oops_end": true, "BUG": true, "__warn": true, "machine_restart": true, "emergency_restart": true,
		"kernel_halt": true, "kernel_power_off": true, "crash_kexec": true, "__crash_kexec": true}
)

// nmiEvidence says why fn may run in NMI, or "": a return on in_nmi()
// that depends on something else ("if (!CAN_USE_IN_NMI && in_nmi())
// return": when it does not return, the rest runs in NMI), a *_IN_NMI
// macro (the series' CAN_USE_IN_NMI), or a comment in it or right above it
// that says it may be called from NMI. A function that returns, or
// asserts (WARN_ON(in_nmi())), when in_nmi() does not; nor one that only
// branches on in_nmi() (it does what NMI allows there, which a
// path-insensitive check cannot follow).
func nmiEvidence(fn *cunit.Func) string {
	lines := strings.Split(string(fn.UnitText), "\n")
	if fn.Start < 1 || fn.End > len(lines) {
		return ""
	}
	body := strings.Join(lines[fn.Start-1:fn.End], "\n")
	code := string(cunit.CodeOnly([]byte(body)))
	var why []string
	for _, r := range fn.Calls {
		if r.Name != "in_nmi" {
			continue
		}
		switch nmiTest(lines, r.Line) {
		case nmiReturns, nmiAsserted:
			return ""
		case nmiGoesOn:
			why = append(why, fmt.Sprintf("its return on in_nmi() (line %d) depends on more than in_nmi()", r.Line))
		}
	}
	if m := canInNMIRE().FindString(code); m != "" {
		why = append(why, "it uses "+m)
	}
	// comments: the body's, and the block right above the function, read
	// a sentence at a time
	comments := commentText(body)
	var above []string
	for k := fn.Start - 2; k >= 0; k-- {
		t := strings.TrimSpace(lines[k])
		if t == "" || !(strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "//")) {
			break
		}
		above = append([]string{t}, above...)
	}
	comments = append(comments, above...)
	text := strings.Join(strings.Fields(strings.NewReplacer("/*", " ", "*/", " ", "//", " ", "*", " ").Replace(strings.Join(comments, "\n"))), " ")
	for _, sentence := range sentenceRE().Split(text, -1) {
		if loc := nmiCommentRE().FindStringIndex(sentence); loc != nil && !negationRE().MatchString(sentence) && !aboutOtherFunc(sentence[:loc[0]], fn.Name) {
			why = append(why, fmt.Sprintf("a comment says so (%q)", strings.TrimSpace(sentence)))
			break
		}
	}
	return strings.Join(why, "; ")
}

// otherFuncRE is a clause about a function, right before what it says of
// it: "unlike foo(), which is", "uses irq_work_queue(), which is".
var otherFuncRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(\w+)\(\)\s*,?\s*(?:which|that)\s+(?:is|are|can\s+be|may\s+be)\s*$`)
})

// aboutOtherFunc reports whether the text before a comment's NMI phrase
// makes the phrase about another function than name ("unlike foo(),
// which is NMI-safe" says nothing of name).
func aboutOtherFunc(before, name string) bool {
	m := otherFuncRE().FindStringSubmatch(before)
	return m != nil && m[1] != name
}

// The uses of in_nmi() nmiTest tells apart.
const (
	nmiOther    = iota // a branch, a value: says nothing of the whole function
	nmiReturns         // if (in_nmi()) return: the rest never runs in NMI
	nmiAsserted        // WARN_ON(in_nmi()): the function says it never runs in NMI
	nmiGoesOn          // if (X && in_nmi()) return: the rest runs in NMI when X is not
)

// nmiTest says what the in_nmi() call on line n (1-based) of lines is.
func nmiTest(lines []string, n int) int {
	text := strings.Join(lines[max(0, n-2):min(len(lines), n+2)], "\n")
	code := string(cunit.CodeOnly([]byte(text)))
	if assertNMIRE().MatchString(code) {
		return nmiAsserted
	}
	for _, l := range ifRE().FindAllStringIndex(code, -1) {
		open := l[1] - 1
		end := matchParen(code, open)
		if end < 0 {
			continue
		}
		cond := strings.Join(strings.Fields(code[open+1:end]), "")
		if !strings.Contains(cond, "in_nmi()") {
			continue
		}
		for {
			m := wrapRE().FindStringSubmatch(cond)
			if m == nil {
				break
			}
			cond = m[2]
		}
		if !strings.HasPrefix(strings.TrimSpace(code[end+1:]), "return") {
			return nmiOther
		}
		for _, term := range orTerms(cond) {
			if term == "in_nmi()" {
				return nmiReturns // in NMI the condition holds whatever the rest is
			}
		}
		return nmiGoesOn
	}
	return nmiOther
}

// orTerms splits a condition (spaces removed) at its top-level ||, each
// term without the parentheses around it and WARN_ON()-like wrappers.
func orTerms(cond string) []string {
	var out []string
	depth, start := 0, 0
	add := func(t string) {
		for {
			if m := wrapRE().FindStringSubmatch(t); m != nil {
				t = m[2]
				continue
			}
			if len(t) > 1 && t[0] == '(' && matchParen(t, 0) == len(t)-1 {
				t = t[1 : len(t)-1]
				continue
			}
			break
		}
		out = append(out, t)
	}
	for i := 0; i < len(cond); i++ {
		switch {
		case cond[i] == '(':
			depth++
		case cond[i] == ')':
			depth--
		case depth == 0 && strings.HasPrefix(cond[i:], "||"):
			add(cond[start:i])
			start = i + 2
			i++
		}
	}
	add(cond[start:])
	if len(out) == 1 && out[0] != cond && strings.Contains(out[0], "||") {
		return orTerms(out[0]) // (a || b) unwrapped
	}
	return out
}

// assertNMIRE is an assertion that the code does not run in NMI.
var assertNMIRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[^\w])(WARN|WARN_ONCE|WARN_ON|WARN_ON_ONCE|BUG_ON|lockdep_assert)\(\s*in_nmi\(\)\s*[,)]`)
})

// matchParen returns the index of the parenthesis that closes the one at
// open, or -1.
func matchParen(code string, open int) int {
	depth := 0
	for i := open; i < len(code); i++ {
		switch code[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// commentText returns the comment lines of C source, one each.
func commentText(src string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(src, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case in:
			out = append(out, t)
			in = !strings.Contains(t, "*/")
		case strings.Contains(t, "/*"):
			out = append(out, t[strings.Index(t, "/*"):])
			in = !strings.Contains(t[strings.Index(t, "/*"):], "*/")
		case strings.Contains(t, "//"):
			out = append(out, t[strings.Index(t, "//"):])
		}
	}
	return out
}

// nmiDepth is how many calls deep the walk follows the series' functions.
const nmiDepth = 4

// nmiLink is one call on the way from a function that may run in NMI.
type nmiLink struct {
	name, file string
	line       int
}

// checkNMI reports, at the patch that adds a call of the chain, what a
// function that may run in NMI (nmiEvidence) calls, directly or through
// the functions the series defines, that is not NMI-safe (nmiUnsafe,
// nmiGuards, and task_work_add() without TWA_NMI_CURRENT), in x86_64 and
// i386 with the series' options on. A callee the series does not define
// and the table does not name is not judged.
func checkNMI(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		if !changesCode(p) {
			continue
		}
		for _, e := range noinstrEnvs() {
			defs := c.nmiFuncs(p.Number, e)
			for _, name := range sortedKeys(defs) {
				for _, root := range defs[name] {
					why := nmiEvidence(root)
					if why == "" {
						continue
					}
					c.nmiWalk(p, defs, root, why, []nmiLink{{root.Name, root.UnitPath, root.Line}}, map[string]bool{root.Name: true})
				}
			}
		}
	}
}

// nmiWalk reports the unsafe calls of the last function of chain, and
// follows its calls of functions the series defines.
func (c *checker) nmiWalk(p *Patch, defs map[string][]*cunit.Func, root *cunit.Func, why string, chain []nmiLink, seen map[string]bool) {
	last := chain[len(chain)-1]
	var fns []*cunit.Func
	if len(chain) == 1 {
		fns = []*cunit.Func{root}
	} else {
		fns = calledDefs(defs[last.name], chain[len(chain)-2].file)
	}
	for _, fn := range fns {
		lines := strings.Split(string(fn.UnitText), "\n")
		nmiMode := fn.Start >= 1 && fn.End <= len(lines) && strings.Contains(strings.Join(lines[fn.Start-1:fn.End], "\n"), "TWA_NMI_CURRENT")
		for _, r := range fn.Calls {
			link := nmiLink{r.Name, fn.UnitPath, r.Line}
			full := append(append([]nmiLink(nil), chain...), link)
			if bad, what := nmiCallUnsafe(r, lines, nmiMode); bad != nil {
				c.nmiReport(p, root, why, full, what, *bad)
				continue
			}
			if defs[r.Name] != nil && !seen[r.Name] && !nmiTerminal[r.Name] && len(chain) < nmiDepth {
				seen[r.Name] = true
				c.nmiWalk(p, defs, root, why, full, seen)
				delete(seen, r.Name)
			}
		}
	}
}

// calledDefs returns the definitions of defs that a call from a file
// named from reaches, as the compiler and linker resolve it: that file's
// own static function if it has one, else the functions other files
// export and the static inline ones of headers (a static function of
// another .c file is that file's own).
func calledDefs(defs []*cunit.Func, from string) []*cunit.Func {
	var own, visible []*cunit.Func
	for _, d := range defs {
		switch {
		case d.Static && d.UnitPath == from:
			own = append(own, d)
		case !d.Static || strings.HasSuffix(d.UnitPath, ".h"):
			visible = append(visible, d)
		}
	}
	if len(own) > 0 {
		return own
	}
	return visible
}

// nmiCallUnsafe says whether call r (on lines of its unit) is unsafe in
// NMI, and how it is written; nmiMode says its function also calls
// task_work_add() with TWA_NMI_CURRENT (then a TWA_RESUME call is the
// other branch).
func nmiCallUnsafe(r cunit.Ref, lines []string, nmiMode bool) (*nmiCall, string) {
	args := callArgs(lines, r)
	switch r.Name {
	case "task_work_add":
		if len(args) == 3 && !strings.Contains(args[2], "TWA_NMI_CURRENT") && !nmiMode {
			return &nmiCall{"task_work_add() from NMI works only with TWA_NMI_CURRENT: the other modes record the work for KASAN and notify the task the non-NMI way (kernel/task_work.c)",
				"in_nmi() ? TWA_NMI_CURRENT : " + strings.TrimSpace(args[2])}, "task_work_add(" + strings.Join(args, ", ") + ")"
		}
		return nil, ""
	case "guard", "scoped_guard":
		if len(args) > 0 {
			if lock, ok := nmiGuards[strings.TrimSpace(args[0])]; ok {
				bad := nmiUnsafe[lock]
				return &bad, r.Name + "(" + strings.TrimSpace(args[0]) + ")"
			}
		}
		return nil, ""
	}
	if bad, ok := nmiUnsafe[r.Name]; ok {
		return &bad, r.Name + "()"
	}
	return nil, ""
}

// callArgs returns the arguments of the call r as written (commas at the
// top level of its parentheses), over several lines if need be.
func callArgs(lines []string, r cunit.Ref) []string {
	if r.Line < 1 || r.Line > len(lines) {
		return nil
	}
	text := strings.Join(lines[r.Line-1:min(len(lines), r.Line+5)], "\n")
	code := string(cunit.CodeOnly([]byte(text)))
	i := r.Col - 1 + len(r.Name)
	for i < len(code) && code[i] != '(' {
		if code[i] != ' ' && code[i] != '\t' {
			return nil
		}
		i++
	}
	var args []string
	depth, start := 0, i+1
	for ; i < len(code); i++ {
		switch code[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return append(args, strings.Join(strings.Fields(code[start:i]), " "))
			}
		case ',':
			if depth == 1 {
				args = append(args, strings.Join(strings.Fields(code[start:i]), " "))
				start = i + 1
			}
		}
	}
	return nil
}

// nmiReport reports an unsafe call of a chain from root at the patch that
// adds a link of it (the nearest the call), or that changes root (the
// patch that makes it run in NMI), once per root and chain.
func (c *checker) nmiReport(p *Patch, root *cunit.Func, why string, chain []nmiLink, what string, bad nmiCall) {
	at := -1
	for i, l := range chain {
		if f := fileOf(p, l.file); f != nil && addedAt(f, l.line) {
			at = i
		}
	}
	if at < 0 {
		if f := fileOf(p, root.UnitPath); f != nil && addsWithin(f, root.Start, root.End) {
			at = len(chain) - 1
		} else {
			return
		}
	}
	var names []string
	for _, l := range chain[1:] {
		names = append(names, l.name+"()")
	}
	if !c.once(root.Name + " " + strings.Join(names, " ") + " " + what) {
		return
	}
	via := ""
	if len(chain) > 2 {
		via = " through " + strings.Join(names[:len(names)-1], " -> ") + ","
	}
	l := chain[at]
	c.report(p, l.file, l.line, "%s() may run in NMI (%s) and calls%s %s: %s; use %s", root.Name, why, via, what, bad.why, bad.instead)
}

// nmiFuncs indexes by name the functions defined at patch n in the C
// files of the series that can hold NMI code (they mention NMI) and the
// files that define what those call, in build e.
func (c *checker) nmiFuncs(n int, e cunit.Env) map[string][]*cunit.Func {
	ix := c.noinstrAt(n)
	out := map[string][]*cunit.Func{}
	parsed := map[string]bool{}
	var queue []string
	if c.nmiMention == nil {
		c.nmiMention = map[nmiVersion]bool{}
	}
	for _, path := range c.seriesCode() {
		// whether a version of the file can hold NMI code, asked once
		k := nmiVersion{path, c.s.version(path, n)}
		mention, seen := c.nmiMention[k]
		if !seen {
			content, ok := c.s.FileAt(path, n)
			mention = ok && nmiMentionRE().Match(content)
			c.nmiMention[k] = mention
		}
		if mention {
			queue = append(queue, path)
		}
	}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if parsed[path] {
			continue
		}
		parsed[path] = true
		u := c.unit(path, n, cunit.After, e)
		if u == nil {
			continue
		}
		for _, f := range u.Funcs {
			out[f.Name] = append(out[f.Name], f)
			for _, r := range f.Calls {
				for p := range ix.defines[r.Name] {
					if !parsed[p] {
						queue = append(queue, p)
					}
				}
			}
		}
	}
	return out
}

// addsWithin reports whether f adds a line from a to b.
func addsWithin(f *File, a, b int) bool {
	for _, l := range f.Added {
		if l.N >= a && l.N <= b {
			return true
		}
	}
	return false
}

// NMIMarkdown is NMI_UNSAFE's table for docs/verify.md: what code that
// may run in NMI must not call, why, and what to use instead.
func NMIMarkdown() string {
	byWhy := map[string][]string{}
	instead := map[string]string{}
	var order []string
	for _, name := range sortedKeys(nmiUnsafe) {
		c := nmiUnsafe[name]
		if byWhy[c.why] == nil {
			order = append(order, c.why)
		}
		byWhy[c.why] = append(byWhy[c.why], name+"()")
		instead[c.why] = c.instead
	}
	var b strings.Builder
	b.WriteString("| calls | why not in NMI | instead |\n|---|---|---|\n")
	for _, why := range order {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.Join(byWhy[why], ", "), why, instead[why])
	}
	var guards []string
	for _, g := range sortedKeys(nmiGuards) {
		guards = append(guards, "guard("+g+")")
	}
	fmt.Fprintf(&b, "| %s, and scoped_guard() of them | the lock the guard takes | as for the lock |\n", strings.Join(guards, ", "))
	b.WriteString("| task_work_add() with another mode than TWA_NMI_CURRENT | the other modes record the work for KASAN and notify the task the non-NMI way (kernel/task_work.c) | in_nmi() ? TWA_NMI_CURRENT : TWA_RESUME |\n")
	return b.String()
}

// nmiVersion is a file at a version (the last patch that changed it).
type nmiVersion struct {
	path    string
	version int
}
