package progress

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func TestLine(t *testing.T) {
	tests := []struct {
		name        string
		unit        Unit
		done, total int64
		elapsed     time.Duration
		final       bool
		want        string
	}{
		{"bytes half", Bytes, 50 << 20, 100 << 20, 10 * time.Second, false, "x: 50 MB of 100 MB (50%), about 10s left"},
		{"files quarter", Files, 250, 1000, 3 * time.Second, false, "x: 250 of 1000 files (25%), about 9s left"},
		{"unknown total", Files, 7, 0, 2 * time.Second, false, "x: 7 files (2s)"},
		{"nothing yet", Bytes, 0, 100 << 20, time.Second, false, "x: 0 MB of 100 MB (0%)"},
		{"final", Bytes, 144 << 20, 144 << 20, 68600 * time.Millisecond, true, "x: 144 MB done in 1m8.6s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line("x", tc.unit, tc.done, tc.total, tc.elapsed, tc.final); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLogEvery reads through a Meter writing to a log (not a terminal):
// a line whenever LogEvery has passed, each ending in a newline with no
// carriage return, and a final line.
func TestLogEvery(t *testing.T) {
	old := LogEvery
	LogEvery = 20 * time.Millisecond
	defer func() { LogEvery = old }()
	var log bytes.Buffer
	m := New(&log, "reading", 10, Bytes)
	r := m.Reader(strings.NewReader("0123456789"))
	buf := make([]byte, 1)
	for {
		if _, err := r.Read(buf); err == io.EOF {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	m.Done()
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) < 3 || len(lines) > 7 {
		t.Errorf("%d lines for 100ms at one a 20ms, want 3 to 7:\n%s", len(lines), log.String())
	}
	if strings.Contains(log.String(), "\r") {
		t.Errorf("a carriage return in a log:\n%q", log.String())
	}
	if !strings.Contains(lines[len(lines)-1], " done in ") {
		t.Errorf("last line %q is not the final one", lines[len(lines)-1])
	}
}

// TestShortJobSilent: work done before the first report is due prints
// nothing in a log.
func TestShortJobSilent(t *testing.T) {
	var log bytes.Buffer
	m := New(&log, "reading", 10, Files)
	m.Add(10)
	m.Done()
	if log.Len() > 0 {
		t.Errorf("printed %q", log.String())
	}
}

type wrapped struct{ w io.Writer }

func (w wrapped) Write(p []byte) (int, error) { return w.w.Write(p) }
func (w wrapped) Unwrap() io.Writer           { return w.w }

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(wrapped{f}) || IsTerminal(&bytes.Buffer{}) {
		t.Error("a file or a buffer taken for a terminal")
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no terminal to check the other way: %v", err)
	}
	defer tty.Close()
	if !IsTerminal(wrapped{tty}) {
		t.Error("/dev/tty through a wrapper not taken for a terminal")
	}
}
