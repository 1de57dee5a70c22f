package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"kpatch/boottest"
	"kpatch/plumbing/qemu"
	"kpatch/series"
)

const testQEMUAbout = `Builds an x86_64 kernel (tinyconfig + IA32 emulation) with the generated
series and kpatch's test driver, boots it in QEMU and runs the deferred
user-space unwinding self-tests for 64-bit and 32-bit tasks. Every user
stack trace the kernel delivers is compared with kpatch's reference walker
and with the call chain the test program made. "kpatch test --qemu" is the
same command.

What each case expects follows the revision, from the spec's facts
(facts/selftest.tmpl, walker.tmpl, configs.tmpl): cookies from v13, and from
v14 a 32-bit task's deferred requests refused (-EINVAL, no trace), which the
32-bit cases then check. Without -v or --stack it boots v16 with the x86
part as Linux 6.19 merged it (--stack x86-6.19), the newest state with an
unwinder on x86, whose 32-bit tasks are unwound: v15 and v16 alone select
no x86 unwinder, and --stack x86 (x86 v2) refuses 32-bit tasks.

faultable_sync, a tracer that calls unwind_user_faultable() directly in two
system calls, runs for revisions whose facts name it (v12 on: the USED bit)
and with --extra. It is not in v11's default run because it fails on v11:
the second call gets the first call's cached trace, since
unwind_reset_info() returns early when no deferred request was made (fixed
in v12 by the UNWIND_USED bit).

The build directory (default <cache>/build/x86_64-unwind) is reused: a
second run rebuilds only what changed. The console log, the initramfs and
the programs are kept there, so that the printed "reproduce the boot
with" command runs as it is.

As a debugging tool: --filter runs a subset of the cases by glob
(kunit.py's --filter_glob), --exec CMD runs a command (or, with --exec
sh, a shell) in the booted guest instead of the cases, with the console
on standard output and the command's exit status as kpatch's, and --gdb
starts QEMU stopped, waiting for the gdb command it prints.

--console FILE checks a saved console log again without building or
booting, as kunit.py parse reads a saved log: the same KTAP, the same
comparison of every trace with the walker of the revision the flags
select (give the -v/--stack of the boot that wrote it), the same table
and exit status. The programs' symbols are read from --progs DIR (default:
the log's directory, or its progs/, as the build directory keeps them).
Exit status 1 when a case fails or the kernel does not build.`

// defaultBootStack is what kpatch test qemu boots when no revision is
// named: v16 with the x86 part as Linux 6.19 merged it, the newest state
// of the series with an unwinder on x86 (v16 alone selects none).
const defaultBootStack = "x86-6.19"

// cmdTestQEMU implements "kpatch test qemu" (and "kpatch test --qemu").
func cmdTestQEMU(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("test qemu", "[--tree DIR] [--base REV] [--spec DIR] [-v N] [--stack NAME] [--build-dir DIR] [--jobs N] [--accel auto|tcg|kvm] [--timeout D] [--json] [--extra] [--filter GLOBS] [--exec CMD] [--gdb] [--verbose N] [--console FILE [--progs DIR]]", testQEMUAbout)
	fs.Bool("qemu", true, "this command (kpatch test --qemu is kpatch test qemu)")
	fs.hide("qemu")
	sf := fs.seriesFlags(seriesFlagSpec{tree: ".", noPlain: true, stack: defaultBootStack})
	verbose := fs.Int("verbose", 0, "verbosity: 0 progress, 1 more progress, 2 full make output and live console")
	buildDir := fs.String("build-dir", "", "build directory (default <cache>/build/x86_64-unwind)")
	accel := fs.String("accel", "auto", "QEMU accelerator: auto (KVM while it works, else TCG; the verdict is kept in <cache>/qemu-accel), tcg or kvm")
	timeout := fs.Duration("timeout", 3*time.Minute, "limit for the boot and the tests in the guest")
	asJSON := fs.jsonFlag()
	extra := fs.Bool("extra", false, "also run the extra cases the revision does not name (faultable_sync, which fails on v11)")
	debug := fs.Bool("debug", false, "boot a kernel with KASAN, PROVE_LOCKING and DEBUG_ATOMIC_SLEEP (build directory <cache>/build/x86_64-unwind-debug); any splat on the console fails the case that was running")
	kernel := fs.String("kernel", "", "boot a kernel as shipped instead of a series: "+shippedNames()+", built unmodified, with the perf cases (build directory <cache>/build/x86_64-NAME)")
	jobs := fs.Int("jobs", 0, "make -j of the kernel build (default: CPUs + 1)")
	perf := fs.Bool("perf", false, "run the perf cases (deferred callchains) on the series built without the test driver (build directory <cache>/build/x86_64-perf)")
	fs.Bool("keep", false, "no effect: the initramfs and the programs always stay in the build directory (accepted for scripts that give it)")
	filter := fs.String("filter", "", "run only the cases these comma-separated globs select, as kunit.py's --filter_glob: CASE (depth_*) or MODE.CASE (ia32.nmi*)")
	execCmd := fs.String("exec", "", "run this shell command in the booted guest instead of the cases (busybox's sh, from busybox-static; the test programs are in /bin), show the console and exit with its status; --exec sh is a shell on the console")
	gdb := fs.Bool("gdb", false, "start QEMU stopped, waiting for gdb on a free local port (-gdb tcp:ADDR -S), KASLR off, no time limit; prints the gdb command line that loads vmlinux's symbols and attaches")
	console := fs.String("console", "", "check this saved console log again instead of booting (as kunit.py parse)")
	progs := fs.String("progs", "", "with --console: the directory of the test programs (or their nm symbol tables NAME.syms) of the boot that wrote the log; default: the log's directory")
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	if *console != "" {
		return recheckConsole(sf, *console, *progs, *asJSON, stdout)
	}
	if *progs != "" {
		return badUsage("--progs %s: only with --console FILE", *progs)
	}
	if err := absFlag("--build-dir", buildDir); err != nil {
		return err
	}
	a, err := qemu.ParseAccel(*accel)
	if err != nil {
		return badUsage("--accel %q: give auto, tcg or kvm", *accel)
	}
	switch {
	case *timeout <= 0:
		return badUsage("--timeout %v: must be more than 0, e.g. 3m", *timeout)
	case *jobs < 0:
		return badUsage("--jobs %d: must be 1 or more", *jobs)
	case *verbose < 0 || *verbose > 2:
		return badUsage("--verbose %d: must be 0, 1 or 2", *verbose)
	}
	if *kernel != "" || *perf {
		return cmdTestQEMUPerf(ctx, perfRun{fs: fs, kernel: *kernel, sf: sf, buildDir: *buildDir, accel: a, timeout: *timeout,
			verbose: *verbose, jobs: *jobs, json: *asJSON}, stdout, stderr)
	}
	var globs []string
	if *filter != "" {
		globs = strings.Split(*filter, ",")
		if _, err := boottest.SelectCases(globs); err != nil {
			return badUsage("--filter %s: %v", *filter, err)
		}
	}
	if *execCmd != "" && *filter != "" {
		return badUsage("--exec runs a command instead of the cases: give --exec or --filter, not both")
	}
	sel, err := sf.selection(false)
	if err != nil {
		return err
	}
	if sf.stackDefaulted() {
		fmt.Fprintf(stderr, "kpatch test qemu: booting %s, the newest state with an unwinder on x86 (-v, --stack or git config kpatch.stack choose another)\n", sel.Revision.Name())
	}
	// A revision that cannot be booted (no unwinder selected on x86_64,
	// facts that do not read) is bad input, refused before any tool runs.
	if _, err := boottest.ExpectationsOf(sel.Revision); err != nil {
		return badInput(err)
	}
	if err := boottest.CheckTools(ctx, true); err != nil { // before the tree is read
		return err
	}
	if err := sf.openTree(sel); err != nil {
		return err
	}
	s, err := series.Generate(ctx, sel)
	if err != nil {
		return fmt.Errorf("generating the series: %w", err)
	}
	o := boottest.Options{
		BuildOptions: boottest.BuildOptions{BuildDir: *buildDir, Jobs: *jobs, Log: stderr, Verbose: *verbose, Debug: *debug, Exec: *execCmd},
		Accel:        a,
		BootTimeout:  *timeout,
		Extra:        *extra,
		Filter:       globs,
		GDB:          *gdb,
	}
	switch {
	case *execCmd != "":
		// The command's output is what the user asked for: the console,
		// live; what is typed goes to the guest's shell.
		o.Console, o.Stdin = stdout, os.Stdin
		if *asJSON {
			o.Console = stderr
		}
	case *verbose >= 2 || *gdb:
		o.Console = stderr
	}
	rep, err := boottest.Run(ctx, s, o)
	if errors.Is(err, boottest.ErrNoBusybox) {
		return fmt.Errorf("--exec: %w", err)
	}
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errInterrupted // the report is of work cut short: none is printed
	}
	if err := printReport(stdout, rep, *asJSON); err != nil {
		return err
	}
	if rep.Exec != nil && *rep.Exec != 0 {
		return &execFailed{status: *rep.Exec}
	}
	if !rep.Passed {
		return ErrTestFailed
	}
	return nil
}

// execFailed is a --exec command that exited non-zero in the guest.
type execFailed struct{ status int }

// Error implements the error interface.
func (e *execFailed) Error() string {
	if e.status < 0 {
		return "--exec: the guest never said how the command ended (see the console above)"
	}
	return fmt.Sprintf("--exec: the command exited %d in the guest", e.status)
}

// recheckConsole is kpatch test qemu --console: a saved console checked
// again against the walker of the selected revision, without a boot.
func recheckConsole(sf *seriesFlags, console, progs string, asJSON bool, stdout io.Writer) error {
	sel, err := sf.selection(false)
	if err != nil {
		return err
	}
	log, err := boottest.ReadConsole(console)
	if err != nil {
		return badUsage("--console %s: %v: give a console log a boot saved (console.log in its build directory)", console, unwrapPath(err))
	}
	if progs == "" {
		progs = filepath.Dir(console)
	}
	syms, err := boottest.ProgramSymbols(progs)
	if errors.Is(err, boottest.ErrNoPrograms) {
		return badUsage("--console %s: %v: give --progs DIR, the progs/ of the build directory of the boot that wrote the log", console, err)
	}
	if err != nil {
		return err
	}
	rep, err := boottest.Recheck(sel.Revision, log, syms, console)
	var other *boottest.OtherSeriesError
	if errors.As(err, &other) {
		return badUsage("--console %s: %v", console, err)
	}
	if err != nil {
		return err
	}
	if err := printReport(stdout, rep, asJSON); err != nil {
		return err
	}
	if !rep.Passed {
		return ErrTestFailed
	}
	return nil
}

// unwrapPath drops the operation and path of a *fs.PathError, which the
// refusal names already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ErrTestFailed is returned by cmdTest when the self-tests ran and a case
// failed (exit status 1), as opposed to a usage or build error.
var ErrTestFailed = errors.New("self-tests failed (see the table above)")

// testReport is a report of kpatch test (--qemu or --build).
type testReport interface {
	WriteText(io.Writer)
}

// printReport prints a test report as text, or as JSON for CI (writeJSON).
func printReport(w io.Writer, rep testReport, asJSON bool) error {
	if asJSON {
		return writeJSON(w, rep)
	}
	rep.WriteText(w)
	return nil
}
