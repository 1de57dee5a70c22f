package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"kpatch/qemu"
	"kpatch/qemu/selftest"
)

const testUsage = `usage: kpatch test --build [flags] (see kpatch test --build --help)
       kpatch test --qemu [--tree DIR] [--base REV] [--spec DIR] [-v N]
                   [--build-dir DIR] [--accel auto|tcg|kvm] [--timeout D] [--json] [--keep] [--extra] [--verbose N]

Builds an x86_64 kernel (tinyconfig + IA32 emulation) with the generated
series and kpatch's test driver, boots it in QEMU and runs the deferred
user-space unwinding self-tests for 64-bit and 32-bit tasks. Every user
stack trace the kernel delivers is compared with kpatch's reference walker
and with the call chain the test program made.

faultable_sync, a tracer that calls unwind_user_faultable() directly in two
system calls, runs for revisions that name it in their Selftest-Cases (v12)
and with --extra. It is not in v11's default run because it fails on v11:
the second call gets the first call's cached trace, since
unwind_reset_info() returns early when no deferred request was made (fixed
in v12 by the UNWIND_USED bit).

The build directory (default <cache>/build/x86_64-unwind) is reused: a
second run rebuilds only what changed. The console log is kept there.
Exit status: 0 all cases passed, 1 a case failed or the build failed,
2 usage error.

Flags:
`

// cmdTest implements "kpatch test".
func cmdTest(args []string, stdout, stderr io.Writer) error {
	if wantsBuild(args) { // kpatch test --build: testbuild.go
		return cmdTestBuild(args, stdout, stderr)
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, testUsage)
		fs.PrintDefaults()
	}
	useQEMU := fs.Bool("qemu", false, "boot the series in QEMU and run the self-tests (required)")
	tree := fs.String("tree", ".", "kernel git repository")
	base := fs.String("base", "", "base revision of the tree (default: the series' recorded base)")
	specDir := fs.String("spec", "", "series description directory (default: the embedded one)")
	version := fs.Int("v", 0, "revision of the series to test; default: the newest")
	verbose := fs.Int("verbose", 0, "verbosity: 0 progress, 1 more progress, 2 full make output and live console")
	buildDir := fs.String("build-dir", "", "build directory (default <cache>/build/x86_64-unwind)")
	accel := fs.String("accel", "auto", "QEMU accelerator: auto (KVM while it works, else TCG; the verdict is kept in <cache>/qemu-accel), tcg or kvm")
	timeout := fs.Duration("timeout", 3*time.Minute, "limit for the boot and the tests in the guest")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	extra := fs.Bool("extra", false, "also run the extra cases the revision does not name (faultable_sync, which fails on v11)")
	keep := fs.Bool("keep", false, "keep the initramfs and the programs in the build directory (they are removed otherwise)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !*useQEMU {
		fmt.Fprintln(stderr, "kpatch test: give --qemu (boot the series) or --build (build every patch)")
		fs.Usage()
		return errUsage
	}
	a, err := qemu.ParseAccel(*accel)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return errUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o := selftest.Options{
		BuildOptions: selftest.BuildOptions{
			Tree: *tree, Base: *base, SpecDir: *specDir, Version: *version, BuildDir: *buildDir,
			Log: stderr, Verbose: *verbose,
		},
		Accel:       a,
		BootTimeout: *timeout,
		Extra:       *extra,
	}
	if *verbose >= 2 {
		o.Console = stderr
	}
	rep, err := selftest.Run(ctx, o)
	if err != nil {
		return err
	}
	if !*keep {
		selftest.Clean(o.BuildDir)
	}
	if err := printReport(stdout, rep, *asJSON); err != nil {
		return err
	}
	if !rep.Passed {
		return ErrTestFailed
	}
	return nil
}

// ErrTestFailed is returned by cmdTest when the self-tests ran and a case
// failed (exit status 1), as opposed to a usage or build error.
var ErrTestFailed = errors.New("self-tests failed (see the table above)")

// testReport is a report of kpatch test (--qemu or --build).
type testReport interface {
	WriteJSON(io.Writer) error
	WriteText(io.Writer)
}

// printReport prints a test report as text, or as JSON for CI.
func printReport(w io.Writer, rep testReport, asJSON bool) error {
	if asJSON {
		return rep.WriteJSON(w)
	}
	rep.WriteText(w)
	return nil
}
