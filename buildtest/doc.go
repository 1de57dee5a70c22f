// Package buildtest checks that every patch of a series builds, in each of
// the kernel configurations that matter for it, without new warnings: what
// the kernel test robot reports after a series is posted, before it is.
//
// Each configuration (x86_64 with the series' options on, x86_64 without
// IA32 emulation, i386) has its own build tree in the kpatch cache,
// built once in full at the base (with W=1, and C=1 when sparse is
// installed) and reused across runs. Then, for patch 1..N, the tree is
// brought to the state after that patch and only the objects the patch
// affects are compiled: the .c files it touches, the objects whose kbuild
// dependency lists (the deps_ lists of <obj>/.foo.o.cmd) name a file it
// touches, the objects that depend on a configuration symbol whose value
// it changes, and objects its Kconfig or Makefile changes enable.
//
// Results are cached at two levels: a step whose whole input (the files
// at that step, the configuration, the compiler and the flags) is the one
// of an earlier run is not rebuilt at all; an object whose recorded
// dependencies all have the content and configuration values they had
// when it was compiled reuses that compile's result (as ccache's direct
// mode does). A change to one template line therefore recompiles only
// the objects that see that line, at the steps where it is present.
//
// Warnings are compared with the same object's warnings at the base, with
// line and column numbers removed; errors and new warnings are attributed
// to the patch that introduced the line (a line-by-line blame through the
// steps) and to the template line or edit that produced it.
//
// Run refuses, before it generates, unpacks or builds anything, options it
// cannot honour (Options.Check: jobs, patch range, configurations,
// --sparse, the compiler command and the build tools; then, once the
// series is generated, a patch range beyond it), as an *OptionsError. A
// run waiting for another one's lock on a build tree says so and stops
// waiting when its context ends. The summary line says how many patches
// were built: with From, the earlier patches are applied without builds of
// their own.
package buildtest
