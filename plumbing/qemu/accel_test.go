package qemu

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// autoEnv is a stand-in host for AccelAuto: a KVM device file, a host
// kernel release, a verdict cache and a log of every QEMU invocation.
type autoEnv struct {
	t     *testing.T
	cache string
	calls string
}

func newAutoEnv(t *testing.T) *autoEnv {
	dir := t.TempDir()
	dev := filepath.Join(dir, "kvm")
	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	oldDev, oldRel := kvmDevice, hostRelease
	kvmDevice, hostRelease = dev, func() string { return "6.1.0-fake" }
	t.Cleanup(func() { kvmDevice, hostRelease = oldDev, oldRel })
	e := &autoEnv{t: t, cache: filepath.Join(dir, "qemu-accel"), calls: filepath.Join(dir, "calls")}
	t.Setenv("FAKE_QEMU_LOG", e.calls)
	t.Setenv("FAKE_QEMU", "ok")
	t.Setenv("FAKE_QEMU_VERSION", "7.2.22")
	return e
}

// run does one auto run and returns the result, the log and what QEMU was
// asked to do: probes and boots per accelerator, in order, e.g.
// ["probe-kvm", "boot-kvm", "boot-tcg"].
func (e *autoEnv) run(opts ...Option) (*Result, string, []string) {
	e.t.Helper()
	os.Remove(e.calls)
	var log, console bytes.Buffer
	start := time.Now()
	opts = append([]Option{WithBinary(fake(e.t)), WithKernel("k"), WithAccel(AccelAuto),
		WithProbeTimeout(time.Second), WithTimeout(30 * time.Second), WithLog(&log),
		WithConsole(&console), WithAccelCache(e.cache)}, opts...)
	res, err := Run(context.Background(), opts...)
	if d := time.Since(start); d > 15*time.Second {
		e.t.Errorf("auto run took %v", d)
	}
	if err != nil {
		e.t.Fatalf("%v\nlog: %s", err, log.String())
	}
	if strings.Contains(console.String(), "SeaBIOS") || strings.Count(console.String(), "ok 1 fake") != 1 {
		e.t.Errorf("console should hold exactly the run that counts: %q", console.String())
	}
	b, _ := os.ReadFile(e.calls)
	var calls []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" || l == "--version" {
			continue
		}
		kind := "boot-"
		if strings.Contains(l, " -bios ") {
			kind = "probe-"
		}
		f := strings.Fields(l)
		for i := range f[:len(f)-1] {
			if f[i] == "-accel" {
				kind += f[i+1]
			}
		}
		calls = append(calls, kind)
	}
	return res, log.String(), calls
}

// verdict returns the accelerator of the only remembered verdict ("" if none).
func (e *autoEnv) verdict() (Accel, string) {
	e.t.Helper()
	m, _ := filepath.Glob(filepath.Join(e.cache, "*.json"))
	if len(m) == 0 {
		return "", ""
	}
	if len(m) > 1 {
		e.t.Fatalf("%d verdict files, want 1: %v", len(m), m)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		e.t.Fatal(err)
	}
	var v verdict
	if err := json.Unmarshal(b, &v); err != nil {
		e.t.Fatalf("%s: %v", m[0], err)
	}
	return v.Accel, v.Reason
}

func TestAutoKVMBehaviours(t *testing.T) {
	tests := []struct {
		name      string
		kvm       string // FAKE_QEMU_KVM
		accel     Accel  // the accelerator of the run that counts
		calls     string // first run
		again     string // second run, with the verdict remembered
		inLog     []string
		remembers Accel
	}{
		{
			name: "kvm works", kvm: "works", accel: AccelKVM,
			calls: "probe-kvm boot-kvm", again: "boot-kvm",
			inLog: []string{"qemu: booted with KVM"}, remembers: AccelKVM,
		},
		{
			name: "kvm hangs after the firmware", kvm: "hang", accel: AccelTCG,
			calls: "probe-kvm boot-kvm boot-tcg", again: "boot-tcg",
			inLog:     []string{`qemu: KVM failed before the boot marker (the guest printed no "Linux version" within 1s); using TCG`},
			remembers: AccelTCG,
		},
		{
			name: "qemu aborts under kvm before printing", kvm: "abort", accel: AccelTCG,
			calls: "probe-kvm boot-tcg", again: "boot-tcg",
			inLog:     []string{"qemu: KVM failed (kvm probe: signal: aborted; qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69); using TCG"},
			remembers: AccelTCG,
		},
		{
			name: "qemu exits under kvm before the marker", kvm: "exit", accel: AccelTCG,
			calls: "probe-kvm boot-kvm boot-tcg", again: "boot-tcg",
			inLog:     []string{"qemu: KVM failed before the boot marker (exit status 1; qemu-system-x86_64: fake exit before the guest printed); using TCG"},
			remembers: AccelTCG,
		},
		{
			name: "the probe hangs", kvm: "probehang", accel: AccelTCG,
			calls: "probe-kvm boot-tcg", again: "boot-tcg",
			inLog:     []string{"qemu: KVM failed (kvm probe did not finish within 1s (timed out)); using TCG"},
			remembers: AccelTCG,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAutoEnv(t)
			t.Setenv("FAKE_QEMU_KVM", tc.kvm)
			res, log, calls := e.run()
			if res.Accel != tc.accel {
				t.Errorf("accel %s, want %s; log: %s", res.Accel, tc.accel, log)
			}
			if got := strings.Join(calls, " "); got != tc.calls {
				t.Errorf("QEMU ran %q, want %q", got, tc.calls)
			}
			for _, s := range tc.inLog {
				if !strings.Contains(log, s) {
					t.Errorf("log lacks %q:\n%s", s, log)
				}
			}
			if n := strings.Count(log, "\n"); n != 1 {
				t.Errorf("log has %d lines, want 1:\n%s", n, log)
			}
			if a, _ := e.verdict(); a != tc.remembers {
				t.Errorf("remembered %q, want %q", a, tc.remembers)
			}
			res, log, calls = e.run()
			if got := strings.Join(calls, " "); got != tc.again {
				t.Errorf("second run: QEMU ran %q, want %q (no probe)", got, tc.again)
			}
			if res.Accel != tc.accel {
				t.Errorf("second run: accel %s, want %s", res.Accel, tc.accel)
			}
			if tc.accel == AccelTCG && !strings.Contains(log, "remove it to try KVM again") {
				t.Errorf("second run does not say where the verdict is kept: %s", log)
			}
		})
	}
}

func TestAutoRememberedKVMFails(t *testing.T) {
	e := newAutoEnv(t)
	t.Setenv("FAKE_QEMU_KVM", "works")
	if res, log, _ := e.run(); res.Accel != AccelKVM {
		t.Fatalf("first run used %s: %s", res.Accel, log)
	}
	// The host changes without the key changing (e.g. a module option):
	// the remembered "KVM works" must not stop the fallback.
	t.Setenv("FAKE_QEMU_KVM", "abort")
	res, log, calls := e.run()
	if res.Accel != AccelTCG || strings.Join(calls, " ") != "boot-kvm boot-tcg" {
		t.Errorf("accel %s, calls %v, want a KVM boot then TCG; log: %s", res.Accel, calls, log)
	}
	if !strings.Contains(log, "KVM failed before the boot marker (signal: aborted; qemu-system-x86_64: error: failed to set MSR") {
		t.Errorf("log: %s", log)
	}
	if a, reason := e.verdict(); a != AccelTCG || !strings.Contains(reason, "failed to set MSR") {
		t.Errorf("verdict %s (%s), want it rewritten to tcg", a, reason)
	}
	if _, _, calls := e.run(); strings.Join(calls, " ") != "boot-tcg" {
		t.Errorf("third run: calls %v, want TCG only", calls)
	}
}

func TestAutoKeyChangeProbesAgain(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T)
		opts   []Option
	}{
		{"qemu version", func(t *testing.T) { t.Setenv("FAKE_QEMU_VERSION", "8.2.0") }, nil},
		{"host kernel", func(t *testing.T) { hostRelease = func() string { return "6.12.0-new" } }, nil},
		{"cpu model", func(*testing.T) {}, []Option{WithCPU("qemu64")}},
		{"machine", func(*testing.T) {}, []Option{WithExtraArgs("-machine", "q35")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAutoEnv(t)
			t.Setenv("FAKE_QEMU_KVM", "abort")
			if _, _, calls := e.run(); strings.Join(calls, " ") != "probe-kvm boot-tcg" {
				t.Fatalf("first run: %v", calls)
			}
			if _, _, calls := e.run(); strings.Join(calls, " ") != "boot-tcg" {
				t.Fatalf("second run probed again: %v", calls)
			}
			tc.change(t)
			t.Setenv("FAKE_QEMU_KVM", "works")
			res, log, calls := e.run(tc.opts...)
			if len(calls) == 0 || calls[0] != "probe-kvm" {
				t.Errorf("after the change: calls %v, want a new probe", calls)
			}
			if res.Accel != AccelKVM {
				t.Errorf("after the change: accel %s; log %s", res.Accel, log)
			}
			m, _ := filepath.Glob(filepath.Join(e.cache, "*.json"))
			if len(m) != 2 {
				t.Errorf("%d verdict files, want one per key: %v", len(m), m)
			}
		})
	}
}

func TestAutoProbeUsesTheRunsCPU(t *testing.T) {
	e := newAutoEnv(t)
	t.Setenv("FAKE_QEMU_KVM", "abort") // aborts only with -cpu host
	_, _, calls := e.run(WithCPU("qemu64"))
	if strings.Join(calls, " ") != "probe-kvm boot-kvm" {
		t.Errorf("with -cpu qemu64 the probe and the boot should work: %v", calls)
	}
	b, _ := os.ReadFile(e.calls)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "--version" && !strings.Contains(l, "-cpu qemu64") {
			t.Errorf("invocation without the run's -cpu: %s", l)
		}
	}
}

func TestAutoWithoutKVMDevice(t *testing.T) {
	e := newAutoEnv(t)
	kvmDevice = filepath.Join(t.TempDir(), "no-kvm")
	res, log, calls := e.run()
	if res.Accel != AccelTCG || strings.Join(calls, " ") != "boot-tcg" {
		t.Errorf("accel %s, calls %v", res.Accel, calls)
	}
	if !strings.Contains(log, "qemu: KVM unusable (open "+kvmDevice+": no such file or directory); using TCG") {
		t.Errorf("log: %s", log)
	}
	if a, _ := e.verdict(); a != "" {
		t.Errorf("remembered %s without trying KVM", a)
	}
}

func TestAutoWithoutCacheProbesEveryTime(t *testing.T) {
	e := newAutoEnv(t)
	e.cache = ""
	t.Setenv("FAKE_QEMU_KVM", "abort")
	for i := 0; i < 2; i++ {
		if _, _, calls := e.run(WithAccelCache("")); strings.Join(calls, " ") != "probe-kvm boot-tcg" {
			t.Errorf("run %d: %v", i, calls)
		}
	}
}

// A KVM failure is remembered only when TCG then boots: if neither prints
// the marker, the fault is the guest's, not KVM's.
func TestAutoInconclusiveNotRemembered(t *testing.T) {
	e := newAutoEnv(t)
	t.Setenv("FAKE_QEMU_KVM", "exit")
	t.Setenv("FAKE_QEMU", "dead")
	_, err := Run(context.Background(), WithBinary(fake(t)), WithKernel("k"), WithAccel(AccelAuto),
		WithProbeTimeout(time.Second), WithTimeout(20*time.Second), WithAccelCache(e.cache))
	if err == nil {
		t.Fatal("a guest that never boots passed")
	}
	if a, _ := e.verdict(); a != "" {
		t.Errorf("remembered %s from an inconclusive run", a)
	}
}

// BenchmarkAutoDecision compares, on this host with the real QEMU, what an
// auto run pays to decide on KVM: the firmware probe (first run, or no
// cache) against reading the remembered verdict (QEMU's --version and a
// small file).
func BenchmarkAutoDecision(b *testing.B) {
	if _, err := os.Stat("/dev/kvm"); err != nil {
		b.Skip("no /dev/kvm")
	}
	c := newConfig([]Option{WithKernel("k")})
	b.Run("probe", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c.probeKVM(context.Background()) // the verdict does not matter, its cost does
		}
	})
	b.Run("remembered", func(b *testing.B) {
		dir := b.TempDir()
		for i := 0; i < b.N; i++ {
			key, err := c.verdictKey(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			path := key.file(dir)
			if loadVerdict(path, key) == nil {
				v := *key
				v.Accel = AccelTCG
				if err := v.store(path); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
