// Package qemu boots a Linux kernel in qemu-system-x86_64 for tests.
//
// A run is configured with functional options (WithKernel, WithInitrd,
// WithAppend, WithTimeout, WithAccel, WithConsole, ...). The guest gets
// no network (-nic none), no host files and no display (-nographic);
// its serial console is fanned out to every writer given with
// WithConsole and kept in the Result. A run is bounded by its context and
// by WithTimeout. Any failure is an *Error that carries the exact command
// line, quoted for a shell, so that a person can reproduce it.
//
// Accelerators: TCG always works. KVM may be present but broken: on some
// hosts QEMU aborts as soon as it sets up a KVM virtual CPU ("failed to set
// MSR", SIGABRT, with -cpu host on a host without VMX/SVM), on others the
// firmware runs and the kernel then hangs. AccelAuto never fails and never
// hangs because of KVM: it boots a 64 KiB probe firmware, which writes to
// the isa-debug-exit port, under KVM with the run's own -cpu and -machine
// arguments and a short timeout, then boots the guest under KVM watching
// its console for the boot marker; any failure before the marker (the
// probe or the boot stalls, QEMU exits, crashes or dies by a signal) makes
// the run fall back to TCG, and one line on the log says why.
//
// With WithAccelCache, the verdict is remembered in a small JSON file keyed
// by the QEMU binary, its version, the host kernel release and the
// -cpu/-machine arguments, so that later auto runs skip the probe: straight
// to TCG where KVM failed, straight to a (still watched) KVM boot where it
// worked.
package qemu
