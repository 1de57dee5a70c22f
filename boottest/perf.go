package boottest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"kpatch/plumbing/cache"
	"kpatch/plumbing/cpio"
	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/kerneltree"
	"kpatch/plumbing/ktap"
	"kpatch/plumbing/perfdata"
	"kpatch/plumbing/qemu"
	"kpatch/series"
	"kpatch/unwind"
	"kpatch/unwind/symtab"
)

// The perf cases check the deferred unwinder through its one upstream
// user, perf (Linux 6.19, c69993ecdd4d): prog/perf_deferred.c samples
// itself with defer_callchain and defer_output, pairs every sample's
// cookie with its PERF_RECORD_CALLCHAIN_DEFERRED and prints each pair as a
// snapshot (the sample's user registers and stack copy, the deferred
// record's entries as the kernel's trace), which CheckPerf walks with
// MergedWalker and compares frame by frame. They need no test driver, so
// they run on a kernel as shipped (RunShipped: Debian's linux-source-7.3,
// unmodified) as well as on a generated series (RunPerfSeries).

//go:embed prog/perf_deferred.c prog/perf_init.c
var perfAssets embed.FS

func perfAsset(name string) []byte {
	b, err := perfAssets.ReadFile(name)
	if err != nil {
		panic("missing embedded asset " + name)
	}
	return b
}

// PerfModes are the KTAP subtests of the perf programs, one per task ABI,
// with the program that prints each.
var PerfModes = []struct{ Subtest, Program string }{
	{"perf_x86_64", "perf_deferred64"},
	{"perf_ia32", "perf_deferred32"},
}

// PerfCases returns the perf cases in the order the programs run them,
// read from the program's own table.
func PerfCases() []string {
	var out []string
	for _, m := range caseRE().FindAllStringSubmatch(string(perfAsset("prog/perf_deferred.c")), -1) {
		out = append(out, m[1])
	}
	return out
}

// perfNoSnapshot are the cases that pass without a snapshot: lost checks
// that a deferred record is missing and the ring said so.
var perfNoSnapshot = map[string]bool{"lost": true}

// PerfDone is what perf_init prints when every program has run.
const PerfDone = "kpatch-perf: done"

// PerfFragment is added to tinyconfig for a kernel the perf cases boot
// without the test driver: Fragment's boot and console symbols, IA32
// emulation, and perf. x86_64 selects HAVE_UNWIND_USER_FP, and with it
// UNWIND_USER, from 6.19 on.
const PerfFragment = `CONFIG_64BIT=y
CONFIG_IA32_EMULATION=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_PRINTK=y
CONFIG_PRINTK_TIME=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_BINFMT_ELF=y
CONFIG_PROC_FS=y
CONFIG_HIGH_RES_TIMERS=y
CONFIG_BUG=y
CONFIG_DEBUG_BUGVERBOSE=y
CONFIG_X86_LOCAL_APIC=y
CONFIG_PERF_EVENTS=y
`

// PerfRequired are the symbols the perf kernel's configuration must have.
var PerfRequired = map[string]string{
	"IA32_EMULATION":      "y",
	"PERF_EVENTS":         "y",
	"UNWIND_USER":         "y",
	"HAVE_UNWIND_USER_FP": "y",
	"SERIAL_8250_CONSOLE": "y",
	"BLK_DEV_INITRD":      "y",
	"PROC_FS":             "y",
}

// MergedFacts are the walker facts (unwind.FromFacts) of the user
// unwinder as merged, 6.19 to 7.3 (the x86-6.19 stack after its last
// patch says the same): the frame ARCH_INIT_USER_FP_FRAME(ws) in units of
// the task's word size, 4 for a compat task, with no segment bases; the
// CFA aligned to that word size; the walk ending at a frame pointer below
// the stack pointer; at most (4096 - 16) / 8 = 510 entries (the unwind
// cache's page after unwind_completed and nr_entries); and the
// start-of-function rule, which only a walk made inside a uprobe handler
// takes, so no perf case does. 7.0's clean-ups change none of it (see
// docs/qemu.md for the diff of the unwind files, 6.19 to 7.3).
var MergedFacts = map[string]string{
	"fp":             "x86_64",
	"compat-fp":      "word-size",
	"align":          "word-size",
	"fp-below-sp":    "stop",
	"max-entries":    "510",
	"function-start": "uprobe",
}

// MergedWalker is the walker's model of the merged unwinder: MergedFacts.
func MergedWalker() (unwind.Config, error) {
	return unwind.FromFacts(MergedFacts)
}

// PerfOptions configures the perf runs.
type PerfOptions struct {
	BuildDir    string // default ShippedBuildDir or PerfBuildDir
	Jobs        int    // make -j; 0 = NumCPU+1
	Log         io.Writer
	Verbose     int
	Accel       qemu.Accel    // default qemu.AccelAuto
	BootTimeout time.Duration // default 5 minutes
	Console     io.Writer     // also gets the guest console live
}

// ShippedBuildDir is the build directory of a shipped kernel:
// <cache>/build/x86_64-<name>.
func ShippedBuildDir(k kerneltree.Shipped) (string, error) {
	return cache.BuildDir("x86_64-" + k.Name)
}

// RunShipped makes the shipped kernel's tree once in the cache, builds it
// unmodified with PerfFragment (rebuilding nothing when nothing changed),
// boots it and runs the perf cases.
func RunShipped(ctx context.Context, k kerneltree.Shipped, o PerfOptions) (*Report, error) {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	if err := CheckTools(ctx, true); err != nil {
		return nil, err
	}
	tree, err := k.Tree(ctx, logw)
	if err != nil {
		return nil, err
	}
	if o.BuildDir == "" {
		if o.BuildDir, err = ShippedBuildDir(k); err != nil {
			return nil, err
		}
	}
	unlock, err := Lock(ctx, o.BuildDir, logw)
	if err != nil {
		return nil, err
	}
	defer unlock()
	t0 := time.Now()
	d := kbuild.NewDir(o.BuildDir)
	fmt.Fprintf(logw, "kbuild: source tree %s (%s of %s, unmodified)\n", d.Src, k.Tag(), tree)
	commit, err := d.UnpackBase(ctx, tree, k.Tag())
	if err != nil {
		return nil, err
	}
	changed, err := perfMake(ctx, d, map[string][]byte{}, kbuild.GitBaseFile(ctx, tree, commit), o)
	if err != nil {
		return nil, err
	}
	build := time.Since(t0)
	fmt.Fprintf(logw, "build: done in %s\n", build.Round(100*time.Millisecond))
	cfg, err := MergedWalker()
	if err != nil {
		return nil, err
	}
	rep, err := BootPerf(ctx, filepath.Join(d.Obj, "arch/x86/boot/bzImage"), cfg, o)
	if err != nil {
		return nil, err
	}
	rep.Series = fmt.Sprintf("%s (Debian %s, Linux %s as shipped)", k.Name, k.Package, k.Version)
	rep.BuildTime, rep.Changed = build, changed
	return rep, nil
}

// PerfBuildDir is the build directory of the perf cases on a generated
// series when none is given: <cache>/build/x86_64-perf. It is not the
// driver's (DefaultBuildDir): the kernel has no test driver and
// PerfFragment's configuration.
func PerfBuildDir() (string, error) {
	return cache.BuildDir("x86_64-perf")
}

// RunPerfSeries builds the generated series' final files over its base
// with PerfFragment, without the test driver (the perf cases need none,
// and the driver's expectations need not know the series), boots it with
// the perf programs and checks them against the series' walker facts after
// its last patch.
func RunPerfSeries(ctx context.Context, s *series.Series, o PerfOptions) (*Report, error) {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	if err := CheckTools(ctx, true); err != nil {
		return nil, err
	}
	if !s.Tree.IsGit() {
		return nil, fmt.Errorf("%s is a plain directory: the boot test unpacks its base from git, give a git repository with --tree", s.Tree.Dir)
	}
	cfg, err := unwind.X86_64At(s.Revision, len(s.Revision.Patches))
	if err != nil {
		return nil, err
	}
	if o.BuildDir == "" {
		if o.BuildDir, err = PerfBuildDir(); err != nil {
			return nil, err
		}
	}
	unlock, err := Lock(ctx, o.BuildDir, logw)
	if err != nil {
		return nil, err
	}
	defer unlock()
	t0 := time.Now()
	d := kbuild.NewDir(o.BuildDir)
	fmt.Fprintf(logw, "kbuild: source tree %s (base %s of %s, no test driver)\n", d.Src, s.Tree.Base, s.Tree.Dir)
	commit, err := d.UnpackBase(ctx, s.Tree.Dir, s.Tree.Base)
	if err != nil {
		return nil, err
	}
	base := kbuild.GitBaseFile(ctx, s.Tree.Dir, commit)
	files := map[string][]byte{}
	for k, v := range s.FinalFiles() {
		files[k] = v
	}
	standIns, err := applyStandIns(s, files, base)
	if err != nil {
		return nil, err
	}
	changed, err := perfMake(ctx, d, files, base, o)
	if err != nil {
		var be *kbuild.BuildError
		if errors.As(err, &be) {
			pk := &BuildKernelError{Err: be, Patches: map[string][]int{}}
			for _, ce := range be.Errors {
				pk.Patches[ce.File] = s.PatchesTouching(ce.File)
			}
			return nil, pk
		}
		return nil, err
	}
	bt := time.Since(t0)
	fmt.Fprintf(logw, "build: done in %s\n", bt.Round(100*time.Millisecond))
	rep, err := BootPerf(ctx, filepath.Join(d.Obj, "arch/x86/boot/bzImage"), cfg, o)
	if err != nil {
		return nil, err
	}
	rep.Series = s.Revision.Name() + " (perf cases)"
	rep.BuildTime, rep.Changed = bt, changed
	for _, n := range standIns {
		rep.StandIns = append(rep.StandIns, n.String())
	}
	return rep, nil
}

// perfMake lays files over the unpacked base, configures with
// PerfFragment and makes the bzImage.
func perfMake(ctx context.Context, d *kbuild.Dir, files map[string][]byte, base kbuild.BaseFile, o PerfOptions) ([]string, error) {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	changed, err := d.Sync(files, base)
	if err != nil {
		return nil, err
	}
	if _, err := d.Configure(ctx, Arch, PerfFragment, PerfRequired); err != nil {
		return nil, err
	}
	return changed, d.Make(ctx, Arch, perfJobs(o.Jobs), perfProgress(logw, o.Verbose), perfMakeLog(logw, o.Verbose), "bzImage")
}

func perfJobs(j int) int {
	if j <= 0 {
		return runtime.NumCPU() + 1
	}
	return j
}

func perfProgress(w io.Writer, verbose int) kbuild.Progress {
	switch {
	case verbose >= 2:
		return nil
	case verbose == 1:
		return kbuild.LineProgress(w, 50)
	}
	return kbuild.LineProgress(w, 200)
}

func perfMakeLog(w io.Writer, verbose int) io.Writer {
	if verbose >= 2 {
		return w
	}
	return nil
}

// BootPerf builds the perf programs and their initramfs in
// o.BuildDir/perf, boots kernel with them and checks the console against
// cfg, the walker's model of that kernel.
func BootPerf(ctx context.Context, kernel string, cfg unwind.Config, o PerfOptions) (*Report, error) {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	if o.Accel == "" {
		o.Accel = qemu.AccelAuto
	}
	if o.BootTimeout == 0 {
		o.BootTimeout = 5 * time.Minute
	}
	progs, initrd, err := buildPerfUserland(ctx, filepath.Join(o.BuildDir, "perf"))
	if err != nil {
		return nil, err
	}
	rep := &Report{BuildDir: o.BuildDir, ConsoleLog: filepath.Join(o.BuildDir, "perf-console.log")}
	logf, err := os.Create(rep.ConsoleLog)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	opts := []qemu.Option{
		qemu.WithKernel(kernel), qemu.WithInitrd(initrd),
		qemu.WithAppend(Cmdline(Guest{})), qemu.WithAccel(o.Accel),
		qemu.WithTimeout(o.BootTimeout), qemu.WithConsole(logf), qemu.WithLog(logw),
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
	if res != nil {
		rep.Accel = string(res.Accel)
		rep.QEMU = qemu.ShellQuote(res.Args)
	}
	if qerr != nil && (res == nil || len(res.Console) == 0) {
		return nil, qerr
	}
	syms := map[string]*symtab.Table{}
	for _, m := range PerfModes {
		tab := new(symtab.Table)
		if err := tab.AddFile(progs[m.Program], 0); err != nil {
			return nil, err
		}
		syms[m.Subtest] = tab
	}
	an := CheckPerf(res.Console, syms, PerfCases(), cfg)
	if qerr != nil {
		var qe *qemu.Error
		if errors.As(qerr, &qe) {
			an.Problems = append([]string{qerr.Error()}, an.Problems...)
		} else {
			an.Problems = append([]string{"booting QEMU: " + qerr.Error()}, an.Problems...)
		}
	}
	rep.Cases, rep.Problems, rep.Splats = an.Cases, an.Problems, an.Splats
	rep.Passed = an.Passed()
	if !rep.Passed && rep.QEMU != "" {
		rep.Problems = append(rep.Problems, "reproduce the boot with: "+rep.QEMU)
	}
	return rep, nil
}

// buildPerfUserland compiles the perf programs and perf_init (only when
// their sources or flags changed) in dir and writes the initramfs; it
// returns the programs by name and the initramfs's path.
func buildPerfUserland(ctx context.Context, dir string) (map[string]string, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	progs := map[string]string{}
	for _, p := range []struct {
		out, src, m string
	}{
		{"perf_deferred64", "perf_deferred.c", "-m64"},
		{"perf_deferred32", "perf_deferred.c", "-m32"},
		{"init", "perf_init.c", "-m64"},
	} {
		src := filepath.Join(dir, p.src)
		if _, err := kbuild.WriteIfChanged(src, perfAsset("prog/"+p.src), 0o644); err != nil {
			return nil, "", err
		}
		out := filepath.Join(dir, p.out)
		args := append(append([]string{p.m}, CFlags...), "-o", out, src)
		h := sha256.New()
		h.Write(perfAsset("prog/" + p.src))
		h.Write([]byte(strings.Join(args, "\x00")))
		sum := hex.EncodeToString(h.Sum(nil))
		stamp := out + ".stamp"
		if b, err := os.ReadFile(stamp); err == nil && string(b) == sum {
			if _, err := os.Stat(out); err == nil {
				progs[p.out] = out
				continue
			}
		}
		if b, err := exec.CommandContext(ctx, "gcc", args...).CombinedOutput(); err != nil {
			return nil, "", fmt.Errorf("gcc %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		if err := os.WriteFile(stamp, []byte(sum), 0o644); err != nil {
			return nil, "", err
		}
		progs[p.out] = out
	}
	var buf bytes.Buffer
	w := cpio.NewWriter(&buf)
	if err := w.CharDev("dev/console", 0o600, 5, 1); err != nil {
		return nil, "", err
	}
	if err := w.Dir("proc", 0o755); err != nil {
		return nil, "", err
	}
	for _, n := range []string{"init", "perf_deferred32", "perf_deferred64"} {
		data, err := os.ReadFile(progs[n])
		if err != nil {
			return nil, "", err
		}
		path := "bin/" + n
		if n == "init" {
			path = "init"
		}
		if err := w.File(path, 0o755, data); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	initrd := filepath.Join(dir, "initramfs.cpio")
	_, err := kbuild.WriteIfChanged(initrd, buf.Bytes(), 0o644)
	return progs, initrd, err
}

// CheckPerf analyses the console of a perf boot: the KTAP results of
// every mode and case, the kernel's splats, and every snapshot (a sample
// paired with its deferred record) walked with cfg (the walker's model of
// the kernel booted) and compared
// entry by entry with the deferred record, and by symbol with the chain
// the program made ("expect:" lines).
func CheckPerf(console []byte, syms map[string]*symtab.Table, cases []string, cfg unwind.Config) *Analysis {
	a := &Analysis{Splats: Splats(console)}
	for _, s := range a.Splats {
		if s.Case == "" {
			a.Problems = append(a.Problems, s.String())
		}
	}
	if !bytes.Contains(console, []byte(PerfDone)) {
		a.Problems = append(a.Problems, "the guest never finished (no \""+PerfDone+"\" on the console)")
	}
	root, _ := ktap.Parse(bytes.NewReader(console))
	for _, p := range allProblems(root, "") {
		a.Problems = append(a.Problems, "KTAP: "+p)
	}
	for _, m := range PerfModes {
		sub := root.Find(m.Subtest)
		if sub == nil {
			a.Problems = append(a.Problems, fmt.Sprintf("%s: no results at all (program crashed or never ran)", m.Subtest))
			for _, c := range cases {
				a.Cases = append(a.Cases, CaseResult{Mode: m.Subtest, Name: c, Status: Fail, Reason: "never reported"})
			}
			continue
		}
		byName := map[string]*ktap.Test{}
		for _, t := range sub.Subtests {
			byName[t.Name] = t
		}
		for _, c := range cases {
			t := byName[c]
			if t == nil {
				a.Cases = append(a.Cases, CaseResult{Mode: m.Subtest, Name: c, Status: Fail, Reason: "never reported"})
				continue
			}
			a.Cases = append(a.Cases, checkPerfCase(m.Subtest, t, syms[m.Subtest], cfg))
		}
	}
	for _, s := range a.Splats {
		if s.Case == "" {
			continue
		}
		for i := range a.Cases {
			if a.Cases[i].Mode == s.Mode && a.Cases[i].Name == s.Case {
				a.Cases[i] = fail(a.Cases[i], s.String())
			}
		}
	}
	return a
}

func checkPerfCase(mode string, t *ktap.Test, syms *symtab.Table, cfg unwind.Config) CaseResult {
	r := CaseResult{Mode: mode, Name: t.Name}
	switch t.Status {
	case ktap.Pass:
		r.Status = Pass
	case ktap.Skip:
		r.Status, r.Reason = Skip, strings.TrimSpace(strings.TrimPrefix(t.Directive, "SKIP"))
	case ktap.Fail:
		r.Status, r.Reason = Fail, "guest: "+guestReason(t)
	default:
		r.Status, r.Reason = Fail, "no result line (crash or timeout)"
	}
	for _, l := range t.Log {
		d := strings.TrimSpace(l.Text)
		switch {
		case strings.HasPrefix(d, "# case:"), strings.HasPrefix(d, "# expect:"), strings.HasPrefix(d, "# perf-"):
		case strings.HasPrefix(d, "# "):
			r.Info = append(r.Info, strings.TrimPrefix(d, "# "))
		}
	}
	pairs, err := ParsePerfPairs(t.Log)
	if err != nil {
		return fail(r, err.Error())
	}
	expects := map[string][]string{}
	for _, l := range t.Log {
		m := expectRE().FindStringSubmatch(l.Text)
		if m == nil {
			continue
		}
		chain, err := ExpandChain(m[4])
		if err != nil {
			return fail(r, fmt.Sprintf("line %d: %v", l.N, err))
		}
		expects[m[1]] = chain
	}
	if len(pairs) == 0 && r.Status == Pass && !perfNoSnapshot[t.Name] {
		r = fail(r, "no sample was paired with its deferred record")
	}
	return checkPerfPairs(r, pairs, expects, syms, cfg)
}

// checkPerfPairs walks the stack copy of every pair with cfg and
// compares it with the deferred record, and the record by symbol with the
// chain the program made (expects, by pair id).
func checkPerfPairs(r CaseResult, pairs []*PerfPair, expects map[string][]string, syms *symtab.Table, cfg unwind.Config) CaseResult {
	for _, p := range pairs {
		r.Traces++
		s, err := p.Snapshot()
		if err != nil {
			r = fail(r, fmt.Sprintf("pair id=%s: %v", p.ID, err))
			continue
		}
		tr, err := cfg.Walk(s.Memory(), s.Regs)
		if err != nil {
			return fail(r, "walker: "+err.Error())
		}
		walker := tr.IPs()
		stop := tr.Stop.String()
		if tr.Fault != nil {
			stop += ": " + tr.Fault.Error()
		}
		kernel := s.Kernel
		if n, ok := perfShortCopy(p, tr); ok && n < len(kernel) {
			r.Info = append(r.Info, fmt.Sprintf("pair id=%s: the stack copy has %d of %d bytes (the sample found the stack not all present), the walker faults at %#x past it: first %d of %d entries compared",
				p.ID, len(p.Sample.Stack), p.Sample.StackSize, perfFaultAddr(tr), n, len(kernel)))
			kernel = kernel[:n]
		}
		mm := Mismatch{ID: p.ID, Tracer: fmt.Sprintf("cookie %#x", p.Sample.Cookie), Kernel: symbolize(syms, s.Kernel), Walker: symbolize(syms, walker), Stop: stop}
		if !equalU64(kernel, walker) {
			mm.What = fmt.Sprintf("deferred record (%d entries) differs from the walker's walk of the sample's stack copy (%d entries) at entry %d",
				len(s.Kernel), len(walker), firstDiff(s.Kernel, walker))
			mm.Expected = expects[p.ID]
			r.Mismatches = append(r.Mismatches, mm)
			r = fail(r, mm.What)
			continue
		}
		if want, ok := expects[p.ID]; ok {
			if msg := compareChain(mm.Kernel, want, false, cfg.MaxEntries); msg != "" {
				mm.What, mm.Expected = msg, want
				r.Mismatches = append(r.Mismatches, mm)
				r = fail(r, msg)
			}
		}
	}
	return r
}

// perfShortCopy says whether the walk of pair p ended only because the
// sample's stack copy is short: the kernel copied fewer bytes than asked
// (a page of the stack was not present, as in the page fault that maps it)
// and the walker faulted at an address the whole copy would have held. It
// returns the number of entries the walker made, which are all that can be
// compared.
func perfShortCopy(p *PerfPair, tr *unwind.Trace) (int, bool) {
	s := p.Sample
	if tr.Fault == nil || uint64(len(s.Stack)) >= s.StackSize {
		return 0, false
	}
	sp := s.Regs[perfdata.RegSP]
	a := perfFaultAddr(tr)
	if a < sp+uint64(len(s.Stack)) || a >= sp+s.StackSize {
		return 0, false
	}
	return len(tr.Entries), true
}

// perfFaultAddr is the address of the read that ended a walk.
func perfFaultAddr(tr *unwind.Trace) uint64 {
	var fe *unwind.FaultError
	if errors.As(tr.Fault, &fe) {
		return fe.Addr
	}
	return 0
}
