// Package boottest proves that the deferred user-space unwinding series
// works: it builds an x86_64 kernel with the generated series and a test
// driver (never part of the series), boots it in QEMU with an initramfs of
// test programs for 64-bit and 32-bit (IA32 emulation) tasks, and checks
// every user stack trace the kernel delivers against kpatch's reference
// walker (package unwind) and against the call chain the program knows it
// made.
//
// The pieces, in the order Run uses them:
//
//   - CheckTools: every program the build and the boot need (BuildTools,
//     BootTools, a static -m64 and -m32 gcc, libelf's header for objtool)
//     must be there before anything is unpacked; a missing one is named
//     with its Debian package;
//   - the series' final files (of the series series.Generate made, with
//     BuildOptions.Files replacing some of them for a negative test) and
//     the driver in driver/ are laid over the base tree
//     in the build directory (package kbuild: only changed files are
//     rewritten, so a second run recompiles nothing). The build directory
//     is locked (Lock), so that concurrent runs wait for each other;
//   - the configuration is tinyconfig plus Fragment, checked for Required;
//     it is redone only when its inputs (the fragment, the compiler's
//     version, the Kconfig files) changed;
//   - make bzImage, with a progress line; a compile error names the
//     patches that touched the file;
//   - the programs in prog/ are compiled static with gcc -m64 and -m32
//     and packed with /init into a reproducible cpio (package cpio);
//   - QEMU (package qemu) with --accel auto by default: KVM while it works,
//     TCG otherwise, the verdict remembered in <cache>/qemu-accel; the
//     console is saved. The kernel command line (Cmdline) passes the host's
//     TSC frequency (tsc_early_khz, tsc=reliable): under TCG the guest
//     cannot calibrate the TSC and would fall back to jiffies, too coarse
//     for the timestamps the cases compare;
//   - the console is parsed as KTAP (package ktap) and scanned for WARN,
//     BUG, oops and panic; each case's snapshots ("snapshot:" ... "end:"
//     lines printed by the driver) are walked with the walker the spec
//     describes for the revision after its last patch (unwind.X86_64At) and
//     compared with the kernel's trace, and symbolized with the programs'
//     ELF symbols against the "expect:" chain the program printed.
//
// The kernel-side driver (driver/kpatch_unwind_test.c) registers tracers
// with unwind_deferred_init, requests with unwind_deferred_request from
// system calls, a timer interrupt, an NMI and a kernel thread, cancels with
// unwind_deferred_cancel and calls unwind_user_faultable; the programs
// drive it with ioctl() on /proc/kpatch_unwind. See Cases for the list.
// For the timer case the program spins in spin_leaf, written in assembly
// with its loop's bounds exported, and the driver requests only when the
// interrupted instruction pointer is inside the loop, so that the expected
// chain is known.
//
// The default run holds the cases whose traces come from deferred requests
// (unwind_deferred_request() and the tracer's callback), the series' main
// use; all of them pass on v11 and v12. The extra cases run when the
// revision's facts name them (facts/selftest.tmpl's extra-cases) or when
// asked (Options.Extra, kpatch test --extra); the guest gets their names
// (KPATCH_EXTRA=a,b, or 1 for all) on its command line, and skips the
// others with the reason. They are uses the series allows that v11 gets
// wrong, or code paths a later revision changed:
//
//   - faultable_sync, a tracer that calls unwind_user_faultable() directly
//     in two system calls at different depths. It fails on v11: the second
//     call returns the trace cached by the first, because
//     unwind_reset_info() returns early when no deferred request set a bit
//     of unwind_mask and so never clears the cache's nr_entries on the way
//     back to user space. Steven Rostedt reports it in the v11 thread
//     (reply to patch 06) and fixes it for v12 with the UNWIND_USED bit.
//   - nmi_current, an NMI's request, with the local APIC's pending
//     irq_work vector read before and after it: TWA_NMI_CURRENT (6.19)
//     raises it, TWA_RESUME does not (facts: nmi-request).
//   - func_start, a uprobe at a function's first instruction whose handler
//     unwinds: 6.19's start-of-function rule takes the return address at
//     the stack pointer, earlier revisions miss the caller (walker facts:
//     function-start).
//
// Options.Filter runs the cases globs select (SelectCases), BuildOptions.Exec
// runs a shell command in the guest instead, Options.GDB waits for gdb;
// Recheck checks a saved console again without booting.
//
// Tests: the unit tests check saved consoles (testdata) with symbol tables
// instead of binaries: testdata/pass, a run of v11 on Debian's 6.12 where
// every case of the default run passes, and testdata/exitbug, a run where patch 11's do_exit()
// hook had landed after exit_mm() on 6.12 (its statements come in another
// order there), so that an exiting task's callback got an empty trace and
// exit_pending failed in both modes. TestCheckTools runs CheckTools with a
// $PATH of stand-in tools. TestQEMU runs everything on Debian's 6.12 tree
// (kerneltree.Debian612) and skips, saying why, only when CheckTools finds
// a tool missing, without the kernel tarball, or with -short.
// TestQEMUBrokenTemplate breaks ra_off in the x86 unwind_user.h template of
// an edited spec copy (linux.Export, as kpatch spec -o writes it) and
// requires the 64-bit cases to fail on the walker comparison;
// BuildOptions.Files serves the build-error test and the benchmark's
// one-line change.
// BenchmarkQEMU measures warm and incremental runs (cold with
// KPATCH_BENCH_COLD=1); the bench case prints the guest's own costs per
// frame and per system call, meaningful only relative to each other under
// TCG. KPATCH_TEST_BUILD_DIR overrides the build directory (default
// DefaultBuildDir, shared with the command).
package boottest
