package qemu

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// kvmDevice is the KVM device AccelAuto checks before it tries KVM; the
// tests point it at a file of their own.
var kvmDevice = "/dev/kvm"

// hostRelease returns the host kernel's release (uname -r), part of the
// key of a remembered accelerator verdict; the tests replace it.
var hostRelease = func() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// cpuMachineArgs returns the arguments of the run with accelerator accel
// that decide how KVM sets up the virtual CPU: -cpu and any -machine (or
// -M) given with WithExtraArgs. The probe uses the same ones, since a CPU
// model can be what breaks KVM (QEMU aborts setting an MSR of -cpu host
// on some hosts where the default model boots).
func (c *config) cpuMachineArgs(accel Accel) []string {
	a := []string{"-cpu", c.cpuModel(accel)}
	for i := 0; i+1 < len(c.extra); i++ {
		if c.extra[i] == "-machine" || c.extra[i] == "-M" {
			a = append(a, c.extra[i], c.extra[i+1])
			i++
		}
	}
	return a
}

func (c *config) cpuModel(accel Accel) string {
	if c.cpu != "" {
		return c.cpu
	}
	if accel == AccelKVM {
		return "host"
	}
	return "max"
}

// verdict is what kpatch remembers about KVM for one QEMU binary, QEMU
// version, host kernel and CPU/machine arguments (see WithAccelCache).
type verdict struct {
	Accel   Accel     `json:"accel"`            // AccelKVM: KVM booted a guest; AccelTCG: KVM failed
	Reason  string    `json:"reason,omitempty"` // why KVM failed
	Binary  string    `json:"binary"`           // absolute path of the QEMU binary
	Version string    `json:"version"`          // its --version output
	Kernel  string    `json:"host_kernel"`      // host kernel release
	Args    []string  `json:"cpu_machine_args"` // the -cpu/-machine arguments
	Time    time.Time `json:"time"`             // when it was recorded
}

// verdictKey fills the identifying fields of a verdict for this run, or
// returns an error if the binary cannot be found.
func (c *config) verdictKey(ctx context.Context) (*verdict, error) {
	bin, err := exec.LookPath(c.binary)
	if err != nil {
		return nil, err
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return nil, err
	}
	vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(vctx, bin, "--version")
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", bin, err)
	}
	return &verdict{
		Binary:  bin,
		Version: strings.TrimSpace(string(out)),
		Kernel:  hostRelease(),
		Args:    c.cpuMachineArgs(AccelKVM),
	}, nil
}

// file returns where the verdict with this key is kept in dir.
func (v *verdict) file(dir string) string {
	h := sha256.New()
	for _, s := range append([]string{v.Binary, v.Version, v.Kernel}, v.Args...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return filepath.Join(dir, hex.EncodeToString(h.Sum(nil))[:16]+".json")
}

// loadVerdict returns the remembered verdict for key, or nil.
func loadVerdict(path string, key *verdict) *verdict {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var v verdict
	if json.Unmarshal(b, &v) != nil || v.Binary != key.Binary || v.Version != key.Version ||
		v.Kernel != key.Kernel || strings.Join(v.Args, "\x00") != strings.Join(key.Args, "\x00") ||
		(v.Accel != AccelKVM && v.Accel != AccelTCG) {
		return nil
	}
	return &v
}

// store writes the verdict atomically (a temporary file renamed into place).
func (v *verdict) store(path string) error {
	v.Time = time.Now().UTC().Truncate(time.Second)
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".verdict-*.tmp")
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if werr == nil && cerr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		return errors.Join(werr, cerr)
	}
	return nil
}

// runAuto implements AccelAuto. KVM is tried only if /dev/kvm can be
// opened and no verdict says it fails; without a verdict the firmware probe
// runs first. The KVM boot is watched for the boot marker: a stall, an exit
// or a crash before it falls back to TCG. The outcome is remembered only
// when it is conclusive: KVM printed the marker, the probe failed (its
// firmware runs everywhere under TCG), or KVM failed where the TCG run
// then printed the marker.
func (c *config) runAuto(ctx context.Context) (*Result, error) {
	f, err := os.OpenFile(kvmDevice, os.O_RDWR, 0)
	if err != nil {
		c.logf("qemu: KVM unusable (%v); using TCG", err)
		return c.run(ctx, AccelTCG, 0)
	}
	f.Close()
	var key, known *verdict
	path := ""
	if c.accelCache != "" {
		if key, err = c.verdictKey(ctx); err == nil {
			path = key.file(c.accelCache)
			known = loadVerdict(path, key)
		}
	}
	remember := func(a Accel, reason string) {
		if path == "" || (known != nil && known.Accel == a && known.Reason == reason) {
			return
		}
		v := *key
		v.Accel, v.Reason = a, reason
		if err := v.store(path); err != nil {
			c.logf("qemu: cannot remember the accelerator verdict: %v", err)
		}
	}
	if known != nil && known.Accel == AccelTCG {
		c.logf("qemu: KVM failed on this host before (%s; remembered in %s, remove it to try KVM again); using TCG", known.Reason, path)
		return c.run(ctx, AccelTCG, 0)
	}
	if known == nil {
		if err := c.probeKVM(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			reason := describe(err)
			remember(AccelTCG, reason)
			c.logf("qemu: KVM failed (%s); using TCG", reason)
			return c.run(ctx, AccelTCG, 0)
		}
	}
	res, err := c.run(ctx, AccelKVM, c.probe)
	if res == nil { // QEMU did not start: not KVM's fault
		return nil, err
	}
	if bytes.Contains(res.Console, []byte(c.marker)) {
		remember(AccelKVM, "")
		c.logf("qemu: booted with KVM")
		return res, err
	}
	if ctx.Err() != nil {
		return res, err
	}
	reason := describe(err)
	if err == nil {
		reason = fmt.Sprintf("QEMU exited (status %d) before the guest printed %q", res.ExitCode, c.marker)
	}
	c.logf("qemu: KVM failed before the boot marker (%s); using TCG", reason)
	tres, terr := c.run(ctx, AccelTCG, 0)
	if tres != nil && bytes.Contains(tres.Console, []byte(c.marker)) {
		remember(AccelTCG, reason)
	}
	return tres, terr
}

// describe says in one line why a KVM attempt failed: the error and the
// first line QEMU printed on stderr (e.g. "signal: aborted; qemu-system-x86_64:
// error: failed to set MSR 0x10a to 0x69").
func describe(err error) string {
	var qe *Error
	if !errors.As(err, &qe) {
		return firstLine(err.Error())
	}
	s := firstLine(qe.Err.Error())
	if qe.TimedOut {
		s += " (timed out)"
	}
	for _, l := range strings.Split(qe.Stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			s += "; " + l
			break
		}
	}
	return s
}

func (c *config) logf(format string, args ...any) {
	fmt.Fprintf(c.log, format+"\n", args...)
}

// probeKVM boots the probe firmware under KVM with the run's -cpu and
// -machine arguments.
func (c *config) probeKVM(ctx context.Context) error {
	return Probe(ctx, c.binary, AccelKVM, c.probe, c.cpuMachineArgs(AccelKVM)...)
}
