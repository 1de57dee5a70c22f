package boottest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"kpatch/plumbing/cache"
	"kpatch/plumbing/qemu"
	"kpatch/series"
	"kpatch/unwind/symtab"
)

// Options configures Run.
type Options struct {
	BuildOptions
	Accel       qemu.Accel    // default qemu.AccelAuto
	BootTimeout time.Duration // default 3 minutes
	Console     io.Writer     // also gets the guest console live (e.g. with -v 2)
	// Extra also runs the extra cases the revision does not name
	// (ExtraCases; the facts' extra-cases always run): faultable_sync,
	// a tracer calling unwind_user_faultable() directly in two system
	// calls, which fails on v11 (see the package doc), nmi_current and
	// func_start.
	Extra bool
	// Filter runs only the cases its globs select (SelectCases, as
	// kunit.py's --filter_glob); the report leaves the others out.
	Filter []string
	// GDB makes QEMU wait, CPU stopped, for gdb on a free loopback port
	// (qemu.WithGDB) with KASLR off; the gdb command line that loads
	// vmlinux's symbols and attaches is printed on Log and kept in
	// Report.GDB. The boot has no time limit then, and runs under TCG
	// unless Accel is qemu.AccelKVM.
	GDB bool
	// Stdin is typed on the guest's console (an interactive --exec sh).
	Stdin io.Reader
}

// Report is the outcome of a run.
type Report struct {
	// Series names what was booted as reports do: "v13", "x86 v2 on v15
	// (posted on v16)" (spec.Revision.Name); "" for a series without one.
	Series     string        `json:"series,omitempty"`
	Passed     bool          `json:"passed"`
	Cases      []CaseResult  `json:"cases"`
	Problems   []string      `json:"problems"`
	ConsoleLog string        `json:"console_log"`
	BuildDir   string        `json:"build_dir"`
	Accel      string        `json:"accel"`
	QEMU       string        `json:"qemu_command"`
	Changed    []string      `json:"changed_files"`
	BuildTime  time.Duration `json:"-"`
	BootTime   time.Duration `json:"-"`
	// BuildSeconds and BootSeconds are BuildTime and BootTime in
	// seconds, the unit of every time in kpatch's JSON.
	BuildSeconds float64  `json:"build_seconds"`
	BootSeconds  float64  `json:"boot_seconds"`
	Bench        []string `json:"bench,omitempty"`
	// StandIns says what the revision needs of its base that the base
	// lacks, and what the build defined in its place (package standin).
	StandIns []string `json:"stand_ins,omitempty"`
	// Debug says the kernel had DebugFragment's checks (--debug); Splats
	// are every report of the kernel's checks on the console, each with
	// the case it failed.
	Debug  bool    `json:"debug,omitempty"`
	Splats []Splat `json:"splats,omitempty"`
	// Rechecked says the report is of a saved console checked again
	// (Recheck, kpatch test qemu --console), not of a boot.
	Rechecked bool `json:"rechecked,omitempty"`
	// GDB is the gdb command line that attached to the boot (Options.GDB).
	GDB string `json:"gdb,omitempty"`
	// Exec is the exit status of BuildOptions.Exec's command in the guest,
	// -1 when the guest never said (it crashed or timed out); nil when no
	// command ran. The cases did not run then.
	Exec *int `json:"exec_status,omitempty"`
}

// DefaultBuildDir is the build directory used when none is given:
// <cache>/build/x86_64-unwind.
func DefaultBuildDir() (string, error) {
	return cache.BuildDir("x86_64-unwind")
}

// DefaultDebugBuildDir is the build directory of a debug boot when none
// is given: <cache>/build/x86_64-unwind-debug.
func DefaultDebugBuildDir() (string, error) {
	d, err := DefaultBuildDir()
	return d + "-debug", err
}

func defaultDir(debug bool) (string, error) {
	if debug {
		return DefaultDebugBuildDir()
	}
	return DefaultBuildDir()
}

// hostTSCkHz reads the host's TSC frequency estimate from /proc/cpuinfo;
// under TCG the guest reads the host's TSC but cannot calibrate it.
func hostTSCkHz() int {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return int(mhz * 1000)
			}
		}
	}
	return 0
}

// Guest is what the guest's command line tells it besides the kernel's
// own parameters (Cmdline).
type Guest struct {
	// Extra are the extra cases to run (KPATCH_EXTRA=a,b), or all of them
	// with AllExtra.
	Extra    []string
	AllExtra bool
	// Filter are the globs that select the cases (KPATCH_FILTER).
	Filter []string
	// Series names what was booted (SeriesTag of spec.Revision.Name),
	// so that a saved console says which walker checks it (Recheck).
	Series string
	// NoKASLR boots the kernel where its symbols say (for gdb).
	NoKASLR bool
}

// Cmdline is the guest's kernel command line.
func Cmdline(g Guest) string {
	c := "console=ttyS0 panic=-1 oops=panic loglevel=7"
	if g.Series != "" {
		c += " kpatch.series=" + g.Series
	}
	switch {
	case g.AllExtra:
		c += " KPATCH_EXTRA=1"
	case len(g.Extra) > 0:
		c += " KPATCH_EXTRA=" + strings.Join(g.Extra, ",")
	}
	if len(g.Filter) > 0 {
		c += " KPATCH_FILTER=" + strings.Join(g.Filter, ",")
	}
	if g.NoKASLR {
		c += " nokaslr"
	}
	if khz := hostTSCkHz(); khz > 0 {
		c += fmt.Sprintf(" tsc_early_khz=%d tsc=reliable", khz)
	}
	return c
}

// SeriesTag is a series' name as one word of a kernel command line:
// "x86 v2 on v16" is x86_v2_on_v16.
func SeriesTag(name string) string {
	var b strings.Builder
	under := false
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+'
		switch {
		case ok:
			b.WriteRune(r)
			under = false
		case !under && b.Len() > 0:
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimRight(b.String(), "_")
}

// RevisionRunsExtra reports whether the series' revision must pass, by
// its self-test facts (extra-cases), cases beyond the default list
// (faultable_sync once the USED bit fixes it): the guest then runs them as
// with Options.Extra.
func RevisionRunsExtra(s *series.Series) bool {
	e, err := ExpectationsOf(s.Revision)
	return err == nil && len(e.ExtraCases) > 0
}

// ErrBadFilter is the error of SelectCases for a glob that is malformed
// or selects no case.
var ErrBadFilter = errors.New("bad case filter")

// SelectCases returns the cases of Cases() that the globs select, in
// their order, as the guest selects them: a glob with a dot matches
// MODE.CASE (x86_64.depth_1, ia32.*), one without matches CASE. No globs
// select every case. A glob that is malformed or selects nothing is an
// error wrapping ErrBadFilter that lists the cases.
func SelectCases(globs []string) ([]string, error) {
	all := Cases()
	if len(globs) == 0 {
		return all, nil
	}
	picked := map[string]bool{}
	for _, g := range globs {
		n := 0
		for _, c := range all {
			for _, m := range Modes {
				name := c
				if strings.Contains(g, ".") {
					name = strings.TrimPrefix(m.Subtest, "unwind_") + "." + c
				}
				ok, err := path.Match(g, name)
				if err != nil || strings.ContainsAny(g, " \t") {
					return nil, fmt.Errorf("%w: %q is not a glob", ErrBadFilter, g)
				}
				if ok {
					picked[c] = true
					n++
				}
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: %q selects none of the cases: %s (MODE.CASE with MODE x86_64 or ia32)", ErrBadFilter, g, strings.Join(all, " "))
		}
	}
	var out []string
	for _, c := range all {
		if picked[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

// Run checks that every tool it needs is installed (CheckTools), builds
// everything, boots the guest and checks the console. The error is for
// missing tools and failures to build or boot; a run whose tests fail returns
// a Report with Passed false and a nil error.
func Run(ctx context.Context, s *series.Series, o Options) (*Report, error) {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	if err := CheckTools(ctx, true); err != nil {
		return nil, err
	}
	if o.BuildDir == "" {
		d, err := defaultDir(o.Debug)
		if err != nil {
			return nil, err
		}
		o.BuildDir = d
	}
	if o.Accel == "" {
		o.Accel = qemu.AccelAuto
	}
	if o.BootTimeout == 0 {
		o.BootTimeout = 3 * time.Minute
	}
	cases, err := SelectCases(o.Filter)
	if err != nil {
		return nil, err
	}
	if o.Exec != "" {
		if _, err := staticBusybox(); err != nil {
			return nil, err
		}
	}
	if o.GDB {
		// No time limit: gdb holds the guest as long as the user likes.
		// Under auto, KVM's watch for the boot marker would take a guest
		// waiting for gdb for a hung one.
		o.BootTimeout = 24 * time.Hour
		if o.Accel == qemu.AccelAuto {
			o.Accel = qemu.AccelTCG
		}
	}
	unlock, err := Lock(ctx, o.BuildDir, logw)
	if err != nil {
		return nil, err
	}
	defer unlock()
	t0 := time.Now()
	art, err := build(ctx, s, o.BuildOptions)
	if err != nil {
		return nil, err
	}
	exp, err := ExpectationsOf(s.Revision)
	if err != nil {
		return nil, err
	}
	rep := &Report{Changed: art.Changed, BuildTime: time.Since(t0), BuildDir: o.BuildDir}
	rep.BuildSeconds = rep.BuildTime.Seconds()
	rep.Series = s.Revision.Name()
	for _, n := range art.StandIns {
		rep.StandIns = append(rep.StandIns, n.String())
	}
	fmt.Fprintf(logw, "build: done in %s\n", rep.BuildTime.Round(100*time.Millisecond))

	rep.ConsoleLog = filepath.Join(o.BuildDir, "console.log")
	logf, err := os.Create(rep.ConsoleLog)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	opts := []qemu.Option{
		qemu.WithKernel(art.Kernel), qemu.WithInitrd(art.Initramfs),
		qemu.WithAppend(Cmdline(Guest{Extra: exp.ExtraCases, AllExtra: o.Extra, Filter: o.Filter, Series: SeriesTag(rep.Series), NoKASLR: o.GDB})),
		qemu.WithAccel(o.Accel), qemu.WithTimeout(o.BootTimeout), qemu.WithConsole(logf), qemu.WithLog(logw),
	}
	if o.Stdin != nil {
		in := o.Stdin
		if !isTerminal(in) {
			// Input sent before the guest's console is open is lost: a
			// pipe's is held back until init says the command runs. A
			// terminal goes to QEMU as it is (the user types at the prompt).
			g := &afterMarker{marker: []byte(execBegin), open: make(chan struct{})}
			opts = append(opts, qemu.WithConsole(g))
			in = &gatedReader{r: in, open: g.open}
		}
		opts = append(opts, qemu.WithStdin(in))
	}
	if o.GDB {
		addr, err := qemu.FreeAddr()
		if err != nil {
			return nil, err
		}
		opts = append(opts, qemu.WithGDB(addr))
		rep.GDB = qemu.ShellQuote(qemu.GDBCommand(art.Vmlinux, addr))
		fmt.Fprintf(logw, "gdb: QEMU waits for gdb, the CPU stopped before the firmware; attach with:\n  %s\n", rep.GDB)
	}
	if o.Console != nil {
		opts = append(opts, qemu.WithConsole(o.Console))
	}
	if c, err := cache.AccelVerdicts(); err == nil {
		opts = append(opts, qemu.WithAccelCache(c))
	}
	t1 := time.Now()
	res, qerr := qemu.Run(ctx, opts...)
	rep.BootTime = time.Since(t1)
	rep.BootSeconds = rep.BootTime.Seconds()
	if res != nil {
		rep.Accel = string(res.Accel)
		rep.QEMU = qemu.ShellQuote(res.Args)
	}
	if qerr != nil && (res == nil || len(res.Console) == 0) {
		return nil, qerr
	}
	if o.Exec != "" {
		st := execStatus(res.Console)
		rep.Exec = &st
		rep.Passed = st == 0
		if qerr != nil {
			rep.Problems = append(rep.Problems, qerr.Error())
		}
		return rep, nil
	}
	syms := map[string]*symtab.Table{}
	for _, m := range Modes {
		tab := new(symtab.Table)
		if serr := tab.AddFile(art.Programs[m.Program], 0); serr != nil {
			return nil, serr
		}
		syms[m.Subtest] = tab
	}
	an, err := analyse(s.Revision, res.Console, syms, cases)
	if err != nil {
		return nil, err
	}
	if qerr != nil {
		var qe *qemu.Error
		if errors.As(qerr, &qe) {
			an.Problems = append([]string{qerr.Error()}, an.Problems...)
		} else {
			an.Problems = append([]string{"booting QEMU: " + qerr.Error()}, an.Problems...)
		}
	}
	rep.Debug = o.Debug
	rep.fill(an)
	if !rep.Passed && rep.QEMU != "" {
		rep.Problems = append(rep.Problems, "reproduce the boot with: "+rep.QEMU)
	}
	return rep, nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}

// WriteText writes the table of cases, the mismatches with the kernel's,
// the walker's and the expected frames side by side, and the problems.
func (r *Report) WriteText(w io.Writer) {
	if r.Exec != nil {
		for _, p := range r.Problems {
			fmt.Fprintf(w, "PROBLEM: %s\n", p)
		}
		fmt.Fprintf(w, "exec: exit status %d; build %s, boot %s (%s); console log: %s\n", *r.Exec,
			r.BuildTime.Round(100*time.Millisecond), r.BootTime.Round(100*time.Millisecond), r.Accel, r.ConsoleLog)
		return
	}
	fmt.Fprintf(w, "%-14s %-22s %-5s %6s  %s\n", "MODE", "CASE", "RES", "TRACES", "REASON")
	for _, c := range r.Cases {
		reason := c.Reason
		if reason == "" && c.Bench != "" {
			reason = c.Bench
		}
		if reason == "" {
			reason = strings.Join(c.Info, "; ")
		}
		fmt.Fprintf(w, "%-14s %-22s %-5s %6d  %s\n", strings.TrimPrefix(c.Mode, "unwind_"), c.Name, strings.ToUpper(string(c.Status)), c.Traces, reason)
	}
	for _, c := range r.Cases {
		for _, m := range c.Mismatches {
			fmt.Fprintf(w, "\n%s %s: trace id=%s tracer=%s: %s (walker stopped: %s)\n", c.Mode, c.Name, m.ID, m.Tracer, m.What, m.Stop)
			fmt.Fprintf(w, "  %-3s %-36s %-36s %s\n", "#", "KERNEL", "WALKER", "EXPECTED")
			n := max(len(m.Kernel), len(m.Walker), len(m.Expected))
			shown := 0
			for i := 0; i < n; i++ {
				k, wk, e := cell(m.Kernel, i), cell(m.Walker, i), ""
				if i < len(m.Expected) {
					e = m.Expected[i]
				}
				same := k == wk && (e == "" || (i < len(m.Kernel) && funcName(m.Kernel[i]) == e))
				if same && i > 3 && i < n-3 {
					if shown == 0 {
						fmt.Fprintf(w, "  ... identical frames elided ...\n")
					}
					shown++
					continue
				}
				mark := " "
				if !same {
					mark = "!"
				}
				fmt.Fprintf(w, "%s %-3d %-36s %-36s %s\n", mark, i, k, wk, e)
			}
		}
	}
	pass, fail, skip := 0, 0, 0
	for _, c := range r.Cases {
		switch c.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			skip++
		}
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "PROBLEM: %s\n", p)
	}
	for _, n := range r.StandIns {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	verdict := "PASS"
	if !r.Passed {
		verdict = "FAIL"
	}
	if r.Series != "" {
		verdict += ": " + r.Series
	}
	if r.Debug {
		verdict += " (debug kernel: KASAN, PROVE_LOCKING, DEBUG_ATOMIC_SLEEP)"
	}
	if r.Rechecked {
		fmt.Fprintf(w, "\n%s: %d passed, %d failed, %d skipped; checked again without booting; console log: %s\n",
			verdict, pass, fail, skip, r.ConsoleLog)
		return
	}
	fmt.Fprintf(w, "\n%s: %d passed, %d failed, %d skipped; build %s, boot %s (%s); console log: %s\n",
		verdict, pass, fail, skip, r.BuildTime.Round(100*time.Millisecond), r.BootTime.Round(100*time.Millisecond), r.Accel, r.ConsoleLog)
}

// execBegin is what init prints once the command's console is open.
const execBegin = "kpatch-exec: begin"

// afterMarker is a console writer that closes open once marker has been
// written to it.
type afterMarker struct {
	marker []byte
	seen   []byte
	open   chan struct{}
	done   bool
}

func (a *afterMarker) Write(p []byte) (int, error) {
	if !a.done {
		a.seen = append(a.seen, p...)
		if bytes.Contains(a.seen, a.marker) {
			a.done, a.seen = true, nil
			close(a.open)
		} else if len(a.seen) > len(a.marker) {
			a.seen = append([]byte(nil), a.seen[len(a.seen)-len(a.marker):]...)
		}
	}
	return len(p), nil
}

// isTerminal reports whether r is a character device (a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// gatedReader reads r once open is closed.
type gatedReader struct {
	r    io.Reader
	open chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

// execStatus reads the exit status of the command the guest ran
// ("kpatch-exec: exit N" from init), -1 when it never said.
func execStatus(console []byte) int {
	st := -1
	for _, l := range strings.Split(string(console), "\n") {
		if _, v, ok := strings.Cut(l, "kpatch-exec: exit "); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				st = n
			}
		}
	}
	return st
}

func cell(f []Frame, i int) string {
	if i < len(f) {
		return f[i].String()
	}
	return ""
}
