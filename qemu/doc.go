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
// Accelerators: TCG always works. KVM may be present but broken (on some
// hosts KVM_RUN hangs), so AccelAuto first probes KVM by booting a
// 64 KiB firmware image that writes to the isa-debug-exit port, under a
// short timeout, and falls back to TCG if the probe does not come back.
package qemu
