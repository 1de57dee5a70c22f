package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"kpatch/plumbing/outdir"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// kpatchBinary builds kpatch once into a temporary directory: the signal
// tests run the real binary, main and all.
func kpatchBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kpatch-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "kpatch")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			t.Logf("%s", out)
		}
	})
	if binErr != nil {
		t.Fatalf("building kpatch: %v", binErr)
	}
	return binPath
}

// lineWriter collects a process's stderr and reports when it holds want.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.want != "" && strings.Contains(l.buf.String(), l.want) {
		l.once.Do(func() { close(l.seen) })
	}
	return len(p), nil
}

func (l *lineWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// interrupt starts kpatch with args, waits until its stderr holds ready
// (or, with ready "", for settle), sends sig and returns the exit status,
// stderr and the time from the signal to the exit.
func interrupt(t *testing.T, args []string, stdin *os.File, ready string, settle time.Duration, sig os.Signal) (int, string, time.Duration) {
	t.Helper()
	cmd := exec.Command(kpatchBinary(t), args...)
	stderr := &lineWriter{want: ready, seen: make(chan struct{})}
	cmd.Stderr = stderr
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if ready != "" {
		select {
		case <-stderr.seen:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%q did not say %q: %s", args, ready, stderr.String())
		}
	} else {
		time.Sleep(settle)
	}
	start := time.Now()
	cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%q did not stop on %v: %s", args, sig, stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String(), time.Since(start)
}

// TestSignals: a long command stops on SIGINT and SIGTERM within a second,
// exits 130 and says so in one line.
func TestSignals(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		// unwind reading a snapshot from a pipe that never ends.
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		code, stderr, took := interrupt(t, []string{"unwind", "--snapshot", "-"}, pr, "", 300*time.Millisecond, sig)
		pr.Close()
		pw.Close()
		if code != 130 || took > time.Second || !strings.HasPrefix(stderr, "kpatch unwind: interrupted") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("unwind on %v: exit %d after %v, stderr %q", sig, code, took, stderr)
		}
	}
}

// TestTestBuildLockSignal: kpatch test build waiting for another run's
// lock on its build tree says so, and stops on Ctrl-C at once (it waited
// for ever, deaf to SIGINT and SIGTERM).
func TestTestBuildLockSignal(t *testing.T) {
	tree := debianTree(t)
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "matrix-i386"), 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := outdir.Lock(context.Background(), filepath.Join(root, "matrix-i386", ".lock"), nil, "the test's lock")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		code, stderr, took := interrupt(t, []string{"test", "build", "--tree", tree, "--base", "v6.12", "--build-root", root, "--config", "i386"}, nil,
			"waiting for another kpatch run", 0, sig)
		if code != 130 || took > time.Second || !strings.Contains(stderr, "kpatch test: interrupted") {
			t.Errorf("%v: exit %d after %v, stderr %q", sig, code, took, stderr)
		}
		if ents, _ := os.ReadDir(filepath.Join(root, "matrix-i386")); len(ents) != 1 {
			t.Errorf("%v: the build tree holds %d entries, want the lock only", sig, len(ents))
		}
	}
}
