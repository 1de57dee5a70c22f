// Package selftest proves that the deferred user-space unwinding series
// works: it builds an x86_64 kernel with the generated series and a test
// driver (never part of the series), boots it in QEMU with an initramfs of
// test programs for 64-bit and 32-bit (IA32 emulation) tasks, and checks
// every user stack trace the kernel delivers against kpatch's reference
// walker (package unwind) and against the call chain the program knows it
// made.
//
// The pieces, in the order Run uses them:
//
//   - the series' final files (SeriesFiles, from series.Generate by
//     default, or any implementation, e.g. with an edited file for a
//     negative test) and the driver in driver/ are laid over the base tree
//     in the build directory (package kbuild: only changed files are
//     rewritten, so a second run recompiles nothing);
//   - the configuration is tinyconfig plus Fragment, checked for Required;
//   - make bzImage, with a progress line; a compile error names the
//     patches that touched the file;
//   - the programs in prog/ are compiled static with gcc -m64 and -m32
//     and packed with /init into a reproducible cpio (package cpio);
//   - QEMU (package qemu), TCG unless KVM is asked for and works, with a
//     timeout; the console is saved;
//   - the console is parsed as KTAP (package ktap) and scanned for WARN,
//     BUG, oops and panic; each case's snapshots ("snapshot:" ... "end:"
//     lines printed by the driver) are walked with unwind.X86_64(14) and
//     compared with the kernel's trace, and symbolized with the programs'
//     ELF symbols against the "expect:" chain the program printed.
//
// The kernel-side driver (driver/kpatch_unwind_test.c) registers tracers
// with unwind_deferred_init, requests with unwind_deferred_request from
// system calls, a timer interrupt, an NMI and a kernel thread, cancels with
// unwind_deferred_cancel and calls unwind_user_faultable; the programs
// drive it with ioctl() on /proc/kpatch_unwind. See Cases for the list.
// Cases beyond the list run only with Options.Extra (kpatch test
// --extra) and are skipped, with the reason, otherwise: faultable_sync
// calls unwind_user_faultable() directly from two system calls and fails
// on v11, whose per-entry cache is only reset after a deferred request.
//
// Tests: the unit tests check a saved console (testdata) with symbol
// tables instead of binaries. TestQEMU runs everything on Debian's 6.12
// tree (kerneltree.Debian612) and skips, saying why, only without QEMU, a
// working gcc -m32 -static or the kernel tarball, or with -short.
// TestQEMUBrokenTemplate breaks ra_off in the x86 unwind_user.h template of
// an edited spec copy (linux.Export, as kpatch spec -o writes it) and
// requires the 64-bit cases to fail on the walker comparison; Override
// serves the build-error test and the benchmark's one-line change. BenchmarkQEMU measures warm and incremental
// runs (cold with KPATCH_BENCH_COLD=1). KPATCH_TEST_BUILD_DIR overrides
// the build directory (default DefaultBuildDir, shared with the command).
package selftest
