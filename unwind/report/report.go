// Package report presents a walked user stack: one symbolized frame a
// line, or JSON, with the kernel's trace beside it when there is one.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"kpatch/unwind"
	"kpatch/unwind/symtab"
)

// Addr is an address, written in JSON as a hexadecimal string ("0x401745")
// so that 64-bit values survive JSON readers that use doubles.
type Addr uint64

// MarshalJSON writes a as a "0x..." string.
func (a Addr) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(fmt.Sprintf("%#x", uint64(a)))), nil
}

// UnmarshalJSON reads a "0x..." string.
func (a *Addr) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("address %s is not a string", b)
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return fmt.Errorf("address %q: %v", s, err)
	}
	*a = Addr(v)
	return nil
}

// Frame is one entry of the trace.
type Frame struct {
	Index int  `json:"index"`
	Addr  Addr `json:"addr"`
	// SP and FP are the walker's stack and frame pointers when it
	// recorded the entry.
	SP       Addr   `json:"sp"`
	FP       Addr   `json:"fp"`
	Function string `json:"function,omitempty"`
	Offset   uint64 `json:"offset"`
	Object   string `json:"object,omitempty"`
	// Kernel is the kernel's entry at this index, if it has one.
	Kernel *Addr `json:"kernel,omitempty"`
}

// Report is a walked stack.
type Report struct {
	// Source names what was walked: "core" or "snapshot".
	Source string `json:"source"`
	// Mode is "64" or "compat".
	Mode       string  `json:"mode"`
	Kind       string  `json:"kind"`
	Patch      int     `json:"patch"`
	MaxEntries int     `json:"max_entries"`
	Stop       string  `json:"stop"`
	Fault      string  `json:"fault,omitempty"`
	Frames     []Frame `json:"frames"`
	// Kernel is the kernel's trace, when the input has one.
	Kernel []Addr `json:"kernel,omitempty"`
	// Match tells whether the kernel's trace equals the walker's, when
	// there is one; Mismatch is then the first index where they differ
	// (-1 if none).
	Match    *bool `json:"match,omitempty"`
	Mismatch int   `json:"mismatch"`
	// Uprobe is set when the walk was made as in a uprobe handler at the
	// ip, and FuncStart when the revision's start-of-function rule took
	// its first step from the stack pointer (Linux 6.19).
	Uprobe    bool `json:"uprobe,omitempty"`
	FuncStart bool `json:"function_start,omitempty"`

	wordSize int
}

// Options describe the walk a report is about.
type Options struct {
	Source string
	Patch  int
	Config unwind.Config
	Compat bool
	// Kernel is the kernel's trace to compare with; nil for none.
	Kernel []uint64
	// Uprobe and FuncStart are Report's.
	Uprobe, FuncStart bool
}

// New builds the report of trace, with locations from tab (which may be
// nil).
func New(trace *unwind.Trace, tab *symtab.Table, o Options) *Report {
	r := &Report{
		Source:     o.Source,
		Mode:       "64",
		Kind:       trace.Kind.String(),
		Patch:      o.Patch,
		MaxEntries: o.Config.MaxEntries,
		Stop:       trace.Stop.String(),
		Frames:     []Frame{},
		Mismatch:   -1,
		Uprobe:     o.Uprobe,
		FuncStart:  o.FuncStart,
		wordSize:   o.Config.LongSize,
	}
	if o.Compat {
		r.Mode = "compat"
		r.wordSize = 4
	}
	if trace.Fault != nil {
		r.Fault = trace.Fault.Error()
	}
	for i, e := range trace.Entries {
		f := Frame{Index: i, Addr: Addr(e.IP), SP: Addr(e.SP), FP: Addr(e.FP)}
		if tab != nil {
			loc := tab.Locate(e.IP, i > 0)
			f.Function, f.Offset, f.Object = loc.Func, loc.Offset, loc.Object
		}
		if i < len(o.Kernel) {
			k := Addr(o.Kernel[i])
			f.Kernel = &k
		}
		r.Frames = append(r.Frames, f)
	}
	if o.Kernel != nil {
		r.Kernel = make([]Addr, len(o.Kernel))
		for i, ip := range o.Kernel {
			r.Kernel[i] = Addr(ip)
		}
		n := max(len(o.Kernel), len(trace.Entries))
		for i := 0; i < n; i++ {
			if i >= len(o.Kernel) || i >= len(trace.Entries) || o.Kernel[i] != trace.Entries[i].IP {
				r.Mismatch = i
				break
			}
		}
		match := r.Mismatch < 0
		r.Match = &match
	}
	return r
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes one frame a line, "#index address function+offset
// object", with the kernel's entry after it when there is a kernel trace,
// then the kernel's extra entries, then a line with how the walk stopped.
func (r *Report) WriteText(w io.Writer) error {
	width := 16
	if r.wordSize == 4 {
		width = 8
	}
	ew := &errWriter{w: w}
	for _, f := range r.Frames {
		loc := "??"
		if f.Function != "" {
			loc = fmt.Sprintf("%s+%#x", f.Function, f.Offset)
		}
		obj := f.Object
		if obj == "" {
			obj = "?"
		}
		fmt.Fprintf(ew, "#%-3d 0x%0*x %s %s", f.Index, width, uint64(f.Addr), loc, obj)
		if r.Kernel != nil {
			switch {
			case f.Kernel == nil:
				fmt.Fprintf(ew, "  kernel: (none)")
			case *f.Kernel == f.Addr:
				fmt.Fprintf(ew, "  kernel: same")
			default:
				fmt.Fprintf(ew, "  kernel: 0x%0*x DIFFERS", width, uint64(*f.Kernel))
			}
		}
		fmt.Fprintln(ew)
	}
	for i := len(r.Frames); i < len(r.Kernel); i++ {
		fmt.Fprintf(ew, "#%-3d (walker has no entry)  kernel: 0x%0*x DIFFERS\n", i, width, uint64(r.Kernel[i]))
	}
	fmt.Fprintf(ew, "stop: %s (%d entries, kind %s, mode %s, patch %d, max %d", r.Stop, len(r.Frames), r.Kind, r.Mode, r.Patch, r.MaxEntries)
	switch {
	case r.FuncStart:
		fmt.Fprintf(ew, ", uprobe at a function's start: entry 1 read at sp")
	case r.Uprobe:
		fmt.Fprintf(ew, ", uprobe")
	}
	fmt.Fprintf(ew, ")")
	if r.Fault != "" {
		fmt.Fprintf(ew, ": %s", r.Fault)
	}
	fmt.Fprintln(ew)
	if r.Match != nil {
		if *r.Match {
			fmt.Fprintf(ew, "kernel: matches (%d entries)\n", len(r.Kernel))
		} else {
			fmt.Fprintf(ew, "kernel: differs from entry %d (kernel %d entries, walker %d)\n", r.Mismatch, len(r.Kernel), len(r.Frames))
		}
	}
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

// Write writes p unless an earlier write failed.
func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
