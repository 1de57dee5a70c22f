package qemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Accel selects the QEMU accelerator.
type Accel string

// The accelerators understood by WithAccel.
const (
	AccelAuto Accel = "auto" // KVM if a short probe boots, else TCG
	AccelTCG  Accel = "tcg"  // software emulation; always works
	AccelKVM  Accel = "kvm"  // hardware virtualization; may hang on broken hosts
)

// ParseAccel converts "auto", "tcg" or "kvm" to an Accel.
func ParseAccel(s string) (Accel, error) {
	switch a := Accel(s); a {
	case AccelAuto, AccelTCG, AccelKVM:
		return a, nil
	}
	return "", fmt.Errorf("unknown accelerator %q (want auto, tcg or kvm)", s)
}

// DefaultBinary is the QEMU system emulator used unless WithBinary is given.
const DefaultBinary = "qemu-system-x86_64"

type config struct {
	binary     string
	kernel     string
	initrd     string
	appendLine string
	timeout    time.Duration
	probe      time.Duration
	accel      Accel
	memMB      int
	cpus       int
	cpu        string
	console    []io.Writer
	extra      []string
	log        io.Writer
	marker     string
	accelCache string
	gdb        string
	stdin      io.Reader
}

// Option configures a run.
type Option func(*config)

// WithBinary sets the QEMU executable (default DefaultBinary).
func WithBinary(path string) Option { return func(c *config) { c.binary = path } }

// WithKernel sets the kernel image (bzImage or ELF vmlinux) passed with -kernel.
func WithKernel(path string) Option { return func(c *config) { c.kernel = path } }

// WithInitrd sets the initramfs passed with -initrd.
func WithInitrd(path string) Option { return func(c *config) { c.initrd = path } }

// WithAppend sets the kernel command line (default "console=ttyS0").
func WithAppend(cmdline string) Option { return func(c *config) { c.appendLine = cmdline } }

// WithTimeout bounds the whole run, probe included (default 2 minutes).
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithProbeTimeout bounds the KVM probe of AccelAuto (default 5 seconds).
func WithProbeTimeout(d time.Duration) Option { return func(c *config) { c.probe = d } }

// WithAccel selects the accelerator (default AccelTCG).
func WithAccel(a Accel) Option { return func(c *config) { c.accel = a } }

// WithMemory sets the guest memory in MiB (default 256).
func WithMemory(mb int) Option { return func(c *config) { c.memMB = mb } }

// WithCPUs sets the number of virtual CPUs (default 1).
func WithCPUs(n int) Option { return func(c *config) { c.cpus = n } }

// WithCPU sets the -cpu model (default "max" under TCG, "host" under KVM).
func WithCPU(model string) Option { return func(c *config) { c.cpu = model } }

// WithConsole adds a writer that receives the guest's serial console as
// it is produced. It may be given several times; every writer gets all
// the output.
func WithConsole(w io.Writer) Option { return func(c *config) { c.console = append(c.console, w) } }

// WithExtraArgs appends raw arguments to the QEMU command line.
func WithExtraArgs(args ...string) Option {
	return func(c *config) { c.extra = append(c.extra, args...) }
}

// WithBootMarker sets the console text that shows a KVM guest is really
// running (default "Linux version"). Under AccelAuto, a KVM boot that has
// not printed it within the probe timeout is killed, and one that ends
// before it (an exit, a crash, an abort) is given up, and the run is redone
// with TCG: on some hosts KVM passes the firmware probe and then hangs.
func WithBootMarker(s string) Option { return func(c *config) { c.marker = s } }

// WithAccelCache sets the directory where AccelAuto remembers whether KVM
// works (default: not remembered, so every auto run probes). A verdict is
// a small JSON file named after its key: the QEMU binary's absolute path,
// its --version output, the host kernel release and the -cpu/-machine
// arguments; any change of them makes a new probe. A remembered "KVM
// works" is still watched: if KVM then fails before the boot marker, the
// run falls back to TCG and the verdict is rewritten. A remembered "KVM
// fails" skips KVM until the file is removed or the key changes.
func WithAccelCache(dir string) Option { return func(c *config) { c.accelCache = dir } }

// WithGDB makes QEMU open its gdb stub on the TCP address addr
// ("127.0.0.1:1234") and wait with the CPU stopped until gdb continues it
// (-gdb tcp:ADDR -S, as -s -S does on port 1234). GDBCommand is the gdb
// command line that attaches to it.
func WithGDB(addr string) Option { return func(c *config) { c.gdb = addr } }

// WithStdin connects r to the guest's serial console: what is read from
// it is typed on the console (an interactive shell in the guest).
// Default: nothing is typed.
func WithStdin(r io.Reader) Option { return func(c *config) { c.stdin = r } }

// FreeAddr returns a TCP address on the loopback interface that no one
// listens on now, for WithGDB: a fixed port (QEMU's -s takes 1234) is
// taken when two runs debug at once.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// GDBCommand returns the command line of gdb that loads the symbols of the
// ELF kernel vmlinux and attaches to QEMU's stub at addr (WithGDB).
func GDBCommand(vmlinux, addr string) []string {
	return []string{"gdb", "-ex", "target remote " + addr, vmlinux}
}

// WithLog sets where the runner reports what it does (accelerator choice,
// probe result). Default: discarded.
func WithLog(w io.Writer) Option { return func(c *config) { c.log = w } }

func newConfig(opts []Option) *config {
	c := &config{
		binary:     DefaultBinary,
		appendLine: "console=ttyS0",
		timeout:    2 * time.Minute,
		probe:      5 * time.Second,
		accel:      AccelTCG,
		memMB:      256,
		cpus:       1,
		log:        io.Discard,
		marker:     "Linux version",
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Args returns the QEMU command line (binary first) for the given options
// and a concrete accelerator (AccelTCG or AccelKVM).
func Args(accel Accel, opts ...Option) ([]string, error) {
	c := newConfig(opts)
	return c.args(accel)
}

func (c *config) args(accel Accel) ([]string, error) {
	if accel != AccelTCG && accel != AccelKVM {
		return nil, fmt.Errorf("Args needs tcg or kvm, not %q", accel)
	}
	if c.kernel == "" {
		return nil, errors.New("no kernel (WithKernel)")
	}
	a := []string{c.binary,
		"-accel", string(accel),
		"-cpu", c.cpuModel(accel),
		"-m", strconv.Itoa(c.memMB),
		"-smp", strconv.Itoa(c.cpus),
		"-nographic", "-no-reboot",
		"-nic", "none",
		"-nodefaults",
		"-serial", "stdio",
		"-monitor", "none",
		"-kernel", c.kernel,
	}
	if c.initrd != "" {
		a = append(a, "-initrd", c.initrd)
	}
	a = append(a, "-append", c.appendLine)
	if c.gdb != "" {
		a = append(a, "-gdb", "tcp:"+c.gdb, "-S")
	}
	a = append(a, c.extra...)
	return a, nil
}

// ShellQuote joins args into a command line that a POSIX shell reads back
// as the same words.
func ShellQuote(args []string) string {
	q := make([]string, len(args))
	for i, s := range args {
		if s != "" && strings.IndexFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			q[i] = s
			continue
		}
		q[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// Result describes a finished run.
type Result struct {
	Args     []string      // the command line that ran
	Accel    Accel         // the accelerator used (tcg or kvm)
	Duration time.Duration // wall time of the boot (probe excluded)
	ExitCode int           // QEMU's exit status
	Console  []byte        // everything the guest wrote to its serial console
}

// Error is a failed run. Error() includes the command line to reproduce it.
type Error struct {
	Args     []string
	Err      error
	TimedOut bool
	Stderr   string // QEMU's own stderr (not the guest console)
}

// Error implements the error interface.
func (e *Error) Error() string {
	var b strings.Builder
	prog := DefaultBinary
	if len(e.Args) > 0 {
		prog = filepath.Base(e.Args[0])
	}
	fmt.Fprintf(&b, "%s: %v", prog, e.Err)
	if e.TimedOut {
		b.WriteString(" (timed out)")
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		fmt.Fprintf(&b, "\nqemu stderr: %s", s)
	}
	fmt.Fprintf(&b, "\nto reproduce: %s", ShellQuote(e.Args))
	return b.String()
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// Run boots the guest and waits until QEMU exits (the guest rebooted,
// powered off or panicked: -no-reboot turns all of them into an exit), the
// timeout passes or ctx is done. Res is non-nil whenever QEMU was started,
// even on error, so that the console can be shown.
//
// With AccelAuto, KVM is used only while it works: any KVM failure before
// the guest prints the boot marker (the probe or the boot stalls, QEMU
// exits, crashes or is killed by a signal) makes the run fall back to TCG,
// with one line on the log saying why. The console writers only see the
// run that counts. See WithAccelCache for how the verdict is remembered.
func Run(ctx context.Context, opts ...Option) (*Result, error) {
	c := newConfig(opts)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	switch c.accel {
	case AccelAuto:
		return c.runAuto(ctx)
	case AccelTCG, AccelKVM:
		return c.run(ctx, c.accel, 0)
	}
	return nil, fmt.Errorf("unknown accelerator %q", c.accel)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// stallError is a KVM boot that did not print the marker in time.
type stallError struct {
	marker string
	after  time.Duration
}

func (e *stallError) Error() string {
	return fmt.Sprintf("the guest printed no %q within %v", e.marker, e.after)
}

// gate holds the console back until the marker has been seen, when
// watching for it; then it passes everything through.
type gate struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	open   bool
	marker string
	seen   chan struct{}
	out    io.Writer
}

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		return g.out.Write(p)
	}
	g.buf.Write(p)
	if bytes.Contains(g.buf.Bytes(), []byte(g.marker)) {
		g.open = true
		close(g.seen)
		if _, err := g.out.Write(g.buf.Bytes()); err != nil {
			return 0, err
		}
		g.buf.Reset()
	}
	return len(p), nil
}

// run boots once with a concrete accelerator. If watch > 0, the guest must
// print the marker within watch, else it is killed and a *stallError is
// returned.
func (c *config) run(ctx context.Context, accel Accel, watch time.Duration) (*Result, error) {
	args, err := c.args(accel)
	if err != nil {
		return nil, err
	}
	res := &Result{Args: args, Accel: accel}
	var console, stderr bytes.Buffer
	var mu sync.Mutex
	out := &lockedWriter{mu: &mu, w: io.MultiWriter(append([]io.Writer{&console}, c.console...)...)}
	g := &gate{marker: c.marker, seen: make(chan struct{}), out: out, open: watch <= 0}
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	var stalled atomic.Bool
	if watch > 0 {
		t := time.AfterFunc(watch, func() {
			select {
			case <-g.seen:
			default:
				stalled.Store(true)
				cancelRun()
			}
		})
		defer t.Stop()
	}
	cmd := exec.CommandContext(runCtx, args[0], args[1:]...)
	cmd.Stdout = g
	cmd.Stderr = &stderr
	if f, ok := c.stdin.(*os.File); ok {
		cmd.Stdin = f // a terminal stays one for QEMU
	} else if c.stdin != nil {
		// os/exec would wait for its copy from c.stdin, which may never
		// return after QEMU exits (a reader that waits for input): copy
		// into a pipe of our own and leave the copy behind.
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		defer pr.Close()
		defer pw.Close()
		cmd.Stdin = pr
		go io.Copy(pw, c.stdin)
	}
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err = cmd.Run()
	res.Duration = time.Since(start)
	mu.Lock()
	res.Console = append([]byte(nil), console.Bytes()...)
	mu.Unlock()
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if stalled.Load() && ctx.Err() == nil {
		return res, &stallError{marker: c.marker, after: watch}
	}
	if ctx.Err() != nil {
		return res, &Error{Args: args, Err: fmt.Errorf("guest did not finish: %w", ctx.Err()), TimedOut: true, Stderr: stderr.String()}
	}
	if err != nil {
		return res, &Error{Args: args, Err: err, Stderr: stderr.String()}
	}
	return res, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// probeExitValue is what the probe firmware writes to isa-debug-exit;
// QEMU then exits with status (value<<1)|1.
const probeExitValue = 0x2a

// ProbeFirmware returns a 64 KiB firmware image whose reset vector writes
// probeExitValue to I/O port 0xf4 (isa-debug-exit) and halts.
func ProbeFirmware() []byte {
	rom := make([]byte, 64<<10)
	// The reset vector F000:FFF0 is the last 16 bytes of the image.
	copy(rom[len(rom)-16:], []byte{
		0xb0, probeExitValue, // mov al, 0x2a
		0xe6, 0xf4, // out 0xf4, al
		0xf4,       // hlt
		0xeb, 0xfd, // jmp $-3 (back to hlt)
	})
	return rom
}

// ProbeArgs returns the command line of an accelerator probe that boots
// the firmware at fw, with extra arguments (such as -cpu and -machine)
// appended.
func ProbeArgs(binary string, accel Accel, fw string, extra ...string) []string {
	a := []string{binary, "-accel", string(accel), "-nographic", "-no-reboot", "-nodefaults",
		"-nic", "none", "-monitor", "none", "-serial", "none", "-m", "16",
		"-bios", fw, "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"}
	return append(a, extra...)
}

// Probe boots the probe firmware with accelerator accel and the extra
// arguments under timeout and returns nil if it came back with the
// expected exit status.
func Probe(ctx context.Context, binary string, accel Accel, timeout time.Duration, extra ...string) error {
	dir, err := os.MkdirTemp("", "kpatch-qemu-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fw := filepath.Join(dir, "probe.rom")
	if err := os.WriteFile(fw, ProbeFirmware(), 0o644); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := ProbeArgs(binary, accel, fw, extra...)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return &Error{Args: args, Err: fmt.Errorf("%s probe did not finish within %v", accel, timeout), TimedOut: true, Stderr: out.String()}
	}
	want := probeExitValue<<1 | 1
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == want {
		return nil
	}
	if err == nil {
		err = errors.New("exit status 0")
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		err = fmt.Errorf("%w, want %d", err, want)
	}
	return &Error{Args: args, Err: fmt.Errorf("%s probe: %w", accel, err), Stderr: out.String()}
}

// ProbeKVM reports whether KVM can boot the probe firmware: /dev/kvm must
// be accessible and the probe, with the extra arguments (give the -cpu and
// -machine of the real run), must finish within timeout.
func ProbeKVM(ctx context.Context, binary string, timeout time.Duration, extra ...string) error {
	f, err := os.OpenFile(kvmDevice, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("no usable %s: %w", kvmDevice, err)
	}
	f.Close()
	return Probe(ctx, binary, AccelKVM, timeout, extra...)
}
