package qemu

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kpatch/internal/testenv"
)

func TestArgs(t *testing.T) {
	tests := []struct {
		name  string
		accel Accel
		opts  []Option
		want  string // ShellQuote of the result, or "error"
	}{
		{
			name:  "tcg defaults",
			accel: AccelTCG,
			opts:  []Option{WithKernel("/b/bzImage")},
			want:  "qemu-system-x86_64 -accel tcg -cpu max -m 256 -smp 1 -nographic -no-reboot -nic none -nodefaults -serial stdio -monitor none -kernel /b/bzImage -append console=ttyS0",
		},
		{
			name:  "kvm with initrd and cmdline",
			accel: AccelKVM,
			opts: []Option{WithKernel("k"), WithInitrd("/tmp/i.cpio"), WithAppend("console=ttyS0 panic=-1"),
				WithMemory(512), WithCPUs(2)},
			want: "qemu-system-x86_64 -accel kvm -cpu host -m 512 -smp 2 -nographic -no-reboot -nic none -nodefaults -serial stdio -monitor none -kernel k -initrd /tmp/i.cpio -append 'console=ttyS0 panic=-1'",
		},
		{
			name:  "binary, cpu model and extra args",
			accel: AccelTCG,
			opts:  []Option{WithBinary("/opt/q"), WithKernel("k"), WithCPU("qemu64"), WithExtraArgs("-d", "int")},
			want:  "/opt/q -accel tcg -cpu qemu64 -m 256 -smp 1 -nographic -no-reboot -nic none -nodefaults -serial stdio -monitor none -kernel k -append console=ttyS0 -d int",
		},
		{name: "no kernel", accel: AccelTCG, want: "error"},
		{name: "auto is not concrete", accel: AccelAuto, opts: []Option{WithKernel("k")}, want: "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Args(tc.accel, tc.opts...)
			if tc.want == "error" {
				if err == nil {
					t.Fatalf("Args = %q, want an error", a)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ShellQuote(a); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			for _, banned := range []string{"-hda", "-drive", "-virtfs", "-fsdev", "user,"} {
				if strings.Contains(strings.Join(a, " "), banned) {
					t.Errorf("command line gives the guest host access: %s", banned)
				}
			}
		})
	}
}

func TestShellQuoteRoundTrip(t *testing.T) {
	words := []string{"a b", "it's", "", "$HOME", "plain-word_1.2", `back\slash`}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh(1) to read the command line back")
	}
	script := "for w in " + ShellQuote(words) + "; do printf '[%s]' \"$w\"; done"
	got, err := exec.Command("sh", "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "[a b][it's][][$HOME][plain-word_1.2][back\\slash]"
	if string(got) != want {
		t.Errorf("sh read back %s, want %s", got, want)
	}
}

func TestParseAccel(t *testing.T) {
	for _, s := range []string{"auto", "tcg", "kvm"} {
		if a, err := ParseAccel(s); err != nil || string(a) != s {
			t.Errorf("ParseAccel(%q) = %q, %v", s, a, err)
		}
	}
	if _, err := ParseAccel("hvf"); err == nil {
		t.Error("ParseAccel(hvf) accepted")
	}
}

func fake(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("testdata", "fake-qemu.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunFanOut(t *testing.T) {
	t.Setenv("FAKE_QEMU", "ok")
	var a, b bytes.Buffer
	res, err := Run(context.Background(), WithBinary(fake(t)), WithKernel("k"), WithConsole(&a), WithConsole(&b))
	if err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || a.String() != string(res.Console) || !strings.Contains(a.String(), "ok 1 fake") {
		t.Errorf("console not fanned out: a=%q b=%q res=%q", a.String(), b.String(), res.Console)
	}
	if res.Accel != AccelTCG {
		t.Errorf("accel %q, want tcg", res.Accel)
	}
}

func TestRunTimeoutAndFailure(t *testing.T) {
	tests := []struct {
		mode     string
		timedOut bool
		inErr    string
	}{
		{"hang", true, "guest did not finish"},
		{"fail", false, "No such file"},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv("FAKE_QEMU", tc.mode)
			start := time.Now()
			res, err := Run(context.Background(), WithBinary(fake(t)), WithKernel("/k"), WithTimeout(time.Second))
			if time.Since(start) > 10*time.Second {
				t.Errorf("run took %v despite a 1s timeout", time.Since(start))
			}
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if qe.TimedOut != tc.timedOut || !strings.Contains(err.Error(), tc.inErr) {
				t.Errorf("err = %v (timedOut=%v)", err, qe.TimedOut)
			}
			if !strings.Contains(err.Error(), "to reproduce: "+fake(t)+" -accel tcg") {
				t.Errorf("error lacks the command line: %v", err)
			}
			if res == nil || !strings.Contains(string(res.Console), "KTAP version 1") {
				t.Errorf("console lost on failure: %+v", res)
			}
		})
	}
}

func TestProbeTCG(t *testing.T) {
	testenv.Full(t, "starts QEMU")
	testenv.Tool(t, DefaultBinary, "qemu-system-x86")
	if err := Probe(context.Background(), DefaultBinary, AccelTCG, 20*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestProbeFirmware(t *testing.T) {
	fw := ProbeFirmware()
	if len(fw) != 64<<10 {
		t.Fatalf("firmware is %d bytes", len(fw))
	}
	if !bytes.Equal(fw[len(fw)-16:len(fw)-12], []byte{0xb0, probeExitValue, 0xe6, 0xf4}) {
		t.Errorf("reset vector does not write to isa-debug-exit: % x", fw[len(fw)-16:])
	}
}

// WithGDB: QEMU waits, CPU stopped, for the gdb that GDBCommand starts;
// tried with the real QEMU and gdb on the probe firmware, which gdb finds
// at the reset vector and continues to its exit.
func TestGDBStub(t *testing.T) {
	bin := testenv.Tool(t, DefaultBinary, "qemu-system-x86")
	gdb := testenv.Tool(t, "gdb", "gdb")
	dir := t.TempDir()
	fw, kernel := filepath.Join(dir, "probe.rom"), filepath.Join(dir, "kernel")
	if err := os.WriteFile(fw, ProbeFirmware(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kernel, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	opts := []Option{WithBinary(bin), WithKernel(kernel), WithGDB(addr), WithTimeout(time.Minute),
		WithExtraArgs("-bios", fw, "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04")}
	a, err := Args(AccelTCG, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ShellQuote(a), " -gdb tcp:"+addr+" -S") {
		t.Errorf("command line %s lacks -gdb tcp:%s -S", ShellQuote(a), addr)
	}
	done := make(chan *Result, 1)
	go func() {
		res, _ := Run(context.Background(), opts...)
		done <- res
	}()
	cmd := GDBCommand(os.Args[0], addr)
	if cmd[0] != "gdb" || cmd[len(cmd)-1] != os.Args[0] {
		t.Fatalf("GDBCommand = %q", cmd)
	}
	args := append([]string{"-batch", "-nx"}, cmd[1:len(cmd)-1]...)
	args = append(args, "-ex", "p/x $pc", "-ex", "continue", os.Args[0])
	var out []byte
	for i := 0; i < 50; i++ { // until QEMU listens
		out, _ = exec.Command(gdb, args...).CombinedOutput()
		if !strings.Contains(string(out), "Connection refused") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(string(out), "= 0xfff0") {
		t.Errorf("gdb did not find the CPU stopped at the reset vector:\n%s", out)
	}
	select {
	case res := <-done:
		if res == nil || res.ExitCode != probeExitValue<<1|1 {
			t.Errorf("QEMU did not run the firmware to its exit after gdb continued: %+v", res)
		}
	case <-time.After(time.Minute):
		t.Fatal("QEMU still waiting after gdb continued")
	}
}

// blockingReader never returns, as a terminal nobody types on.
type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

// A guest that ends while its stdin (WithStdin) still waits for input is
// a run that ended well: stdin is abandoned after QEMU exits.
func TestRunStdinOpenAtExit(t *testing.T) {
	res, err := Run(context.Background(), WithBinary(fake(t)), WithKernel("k"), WithStdin(blockingReader{}), WithTimeout(30*time.Second))
	if err != nil || res == nil || !strings.Contains(string(res.Console), "ok 1 fake") {
		t.Fatalf("Run = %v, %v", res, err)
	}
}
