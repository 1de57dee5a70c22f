// Package progress reports how far a long piece of work (unpacking a
// kernel tree) has come and what is left: on a terminal one line redrawn
// in place a few times a second, in a log (a file, a pipe) one line every
// few seconds, so that no minute passes in silence either way.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Unit says how a Meter prints its amounts.
type Unit int

const (
	// Bytes prints amounts as MB.
	Bytes Unit = iota
	// Files prints amounts as counts of files.
	Files
)

// Intervals between two reports: on a terminal, and in a log.
var (
	TermEvery = 250 * time.Millisecond
	LogEvery  = 5 * time.Second
)

// Meter counts the work done towards a total. It is safe for use by
// several goroutines.
type Meter struct {
	w     io.Writer
	what  string
	unit  Unit
	total int64
	term  bool
	every time.Duration

	mu    sync.Mutex
	done  int64
	start time.Time
	last  time.Time
	drawn bool // a terminal line is on screen, not yet ended
}

// New returns a Meter reporting to w the work named what (one line's
// prefix, "unpacking linux-source-6.12.tar.xz"); total 0 means unknown.
// Nothing is printed until the first report is due.
func New(w io.Writer, what string, total int64, unit Unit) *Meter {
	m := &Meter{w: w, what: what, unit: unit, total: total, term: IsTerminal(w), every: LogEvery}
	if m.term {
		m.every = TermEvery
	}
	m.start = time.Now()
	m.last = m.start
	return m
}

// Add counts n more units done and reports when a report is due.
func (m *Meter) Add(n int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += n
	if now := time.Now(); now.Sub(m.last) >= m.every {
		m.last = now
		m.report(now, false)
	}
}

// Done reports the work finished, in one line: elapsed time and amount.
// On a terminal it ends the redrawn line; in a log it prints a final
// line only when an earlier one was printed (a short job stays silent).
func (m *Meter) Done() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.drawn || !m.term && m.last != m.start {
		m.report(time.Now(), true)
	}
}

// Line is the report printed when done units of total are done after
// elapsed: what, the amounts, the share, and the time left at the rate
// so far.
func Line(what string, unit Unit, done, total int64, elapsed time.Duration, final bool) string {
	amount := func(v int64) string {
		if unit == Bytes {
			return fmt.Sprintf("%d MB", v>>20)
		}
		return fmt.Sprintf("%d", v)
	}
	noun := ""
	if unit == Files {
		noun = " files"
	}
	if final {
		return fmt.Sprintf("%s: %s%s done in %s", what, amount(done), noun, elapsed.Round(time.Second/10))
	}
	if total <= 0 {
		return fmt.Sprintf("%s: %s%s (%s)", what, amount(done), noun, elapsed.Round(time.Second))
	}
	s := fmt.Sprintf("%s: %s of %s%s (%d%%)", what, amount(done), amount(total), noun, done*100/total)
	if done > 0 && done < total {
		left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
		s += fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	return s
}

func (m *Meter) report(now time.Time, final bool) {
	l := Line(m.what, m.unit, m.done, m.total, now.Sub(m.start), final)
	if m.term {
		// Redraw in place; erase what a longer line left.
		fmt.Fprintf(m.w, "\r%s\x1b[K", l)
		m.drawn = !final
		if final {
			fmt.Fprintln(m.w)
		}
		return
	}
	fmt.Fprintln(m.w, l)
}

// Reader returns r counting what is read through it.
func (m *Meter) Reader(r io.Reader) io.Reader {
	return &reader{r: r, m: m}
}

// Writer returns w counting what is written through it.
func (m *Meter) Writer(w io.Writer) io.Writer {
	return &writer{w: w, m: m}
}

type writer struct {
	w io.Writer
	m *Meter
}

func (w *writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.m.Add(int64(n))
	return n, err
}

type reader struct {
	r io.Reader
	m *Meter
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.m.Add(int64(n))
	return n, err
}

// Unwrapper is a writer that passes what it is given to another one (a
// lock or a prefix around os.Stderr); IsTerminal looks through it.
type Unwrapper interface {
	Unwrap() io.Writer
}

// IsTerminal reports whether w is, or passes its output to, a terminal.
func IsTerminal(w io.Writer) bool {
	for {
		u, ok := w.(Unwrapper)
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}
