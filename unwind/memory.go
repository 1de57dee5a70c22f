package unwind

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// Memory is a user address space the walker reads. ReadAt fills p with the
// bytes at addr or returns an error, which the walker treats as a fault (a
// get_user() that failed). Implementations should return an error wrapping
// ErrFault for addresses they do not have.
type Memory interface {
	ReadAt(p []byte, addr uint64) error
}

// ErrFault is the error FaultError wraps: the memory is not there.
var ErrFault = errors.New("fault")

// FaultError is a read of Len bytes at Addr that faulted, because of
// Reason or, when Reason is empty, of Err.
type FaultError struct {
	Addr   uint64
	Len    int
	Reason string
	Err    error
}

// Error describes the fault.
func (e *FaultError) Error() string {
	why := e.Reason
	if why == "" && e.Err != nil {
		why = e.Err.Error()
	}
	if why == "" {
		return fmt.Sprintf("fault reading %d bytes at %#x", e.Len, e.Addr)
	}
	return fmt.Sprintf("fault reading %d bytes at %#x: %s", e.Len, e.Addr, why)
}

// Unwrap returns ErrFault and Err, so errors.Is finds both.
func (e *FaultError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrFault, e.Err}
	}
	return []error{ErrFault}
}

// Segment is a piece of memory: Data mapped at Addr.
type Segment struct {
	Addr uint64
	Data []byte
}

// End returns the address just past the segment, saturating at 2^64-1.
func (s Segment) End() uint64 {
	e := s.Addr + uint64(len(s.Data))
	if e < s.Addr {
		return ^uint64(0)
	}
	return e
}

// Segments is a Memory made of non-overlapping segments sorted by
// address, such as a captured stack. Reads may span adjacent segments.
type Segments []Segment

// NewSegments sorts segs by address and checks that they do not overlap.
// Empty segments are dropped.
func NewSegments(segs ...Segment) (Segments, error) {
	s := make(Segments, 0, len(segs))
	for _, seg := range segs {
		if len(seg.Data) > 0 {
			s = append(s, seg)
		}
	}
	sort.Slice(s, func(i, j int) bool { return s[i].Addr < s[j].Addr })
	for i := 1; i < len(s); i++ {
		if s[i].Addr < s[i-1].End() {
			return nil, fmt.Errorf("segments at %#x and %#x overlap", s[i-1].Addr, s[i].Addr)
		}
	}
	return s, nil
}

// ReadAt reads len(p) bytes at addr, failing with a *FaultError if any of
// them is in no segment.
func (s Segments) ReadAt(p []byte, addr uint64) error {
	want := len(p)
	start := addr
	for len(p) > 0 {
		i := sort.Search(len(s), func(i int) bool { return s[i].End() > addr })
		if i == len(s) || s[i].Addr > addr {
			return &FaultError{Addr: start, Len: want, Reason: fmt.Sprintf("%#x is not mapped", addr)}
		}
		n := copy(p, s[i].Data[addr-s[i].Addr:])
		p = p[n:]
		next := addr + uint64(n)
		if len(p) > 0 && next < addr {
			return &FaultError{Addr: start, Len: want, Reason: "read wraps around the address space"}
		}
		addr = next
	}
	return nil
}

// ProcessMemory is the memory of a live process, read through
// /proc/PID/mem. Reading another process needs the same permission as
// ptrace (ptrace_may_access), for example being its parent or root.
type ProcessMemory struct {
	f *os.File
}

// OpenProcess opens the memory of process pid.
func OpenProcess(pid int) (*ProcessMemory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return nil, err
	}
	return &ProcessMemory{f: f}, nil
}

// ReadAt reads len(p) bytes at addr of the process. Unmapped addresses
// give a *FaultError.
func (m *ProcessMemory) ReadAt(p []byte, addr uint64) error {
	if addr > 1<<63-1 || uint64(len(p)) > 1<<63-addr {
		return &FaultError{Addr: addr, Len: len(p), Reason: "address not representable as a file offset"}
	}
	n, err := m.f.ReadAt(p, int64(addr))
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &FaultError{Addr: addr, Len: len(p), Reason: err.Error()}
}

// Close closes the process's memory file.
func (m *ProcessMemory) Close() error { return m.f.Close() }
