// Package perfdata reads the records perf_event_open's mmap ring buffer
// holds, as include/uapi/linux/perf_event.h lays them out: samples with a
// callchain, user registers and a copy of the user stack, the deferred
// callchains of Linux 6.19 (PERF_RECORD_CALLCHAIN_DEFERRED), and the
// records that say what was lost (PERF_RECORD_LOST).
//
// The deferred callchain ABI (c69993ecdd4d, "perf: Support deferred user
// unwind"): an event with the attribute bit defer_callchain (bit 38 of the
// flags word after read_format) ends a sample's callchain, instead of the
// user entries, with PERF_CONTEXT_USER_DEFERRED (-640) and a cookie; an
// event with defer_output (bit 39) gets, once the task is about to return
// to user space, a record of type 22: header, u64 cookie, u64 nr, u64
// ips[nr], then the sample_id of sample_id_all.
//
// A Format says what an event's records carry (its sample_type and
// sample_regs_user); Parse reads one record, Records splits a ring's bytes
// into records (a record may wrap around the ring's end).
package perfdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Record types (enum perf_event_type).
const (
	RecordLost              = 2
	RecordExit              = 4
	RecordSample            = 9
	RecordCallchainDeferred = 22
)

// Callchain contexts (enum perf_callchain_context): an entry at or above
// ContextMax is a context marker, not an address.
const (
	ContextHV           = ^uint64(32 - 1)   // (u64)-32
	ContextKernel       = ^uint64(128 - 1)  // (u64)-128
	ContextUser         = ^uint64(512 - 1)  // (u64)-512
	ContextUserDeferred = ^uint64(640 - 1)  // (u64)-640
	ContextMax          = ^uint64(4095 - 1) // (u64)-4095
)

// Attribute flag bits, counted from disabled (bit 0) in the u64 after
// read_format.
const (
	BitDeferCallchain = 38
	BitDeferOutput    = 39
)

// Sample types (enum perf_event_sample_format) this package reads.
const (
	SampleIP         = 1 << 0
	SampleTID        = 1 << 1
	SampleTime       = 1 << 2
	SampleAddr       = 1 << 3
	SampleCallchain  = 1 << 5
	SampleIDBit      = 1 << 6
	SampleCPU        = 1 << 7
	SamplePeriod     = 1 << 8
	SampleStreamID   = 1 << 9
	SampleRegsUser   = 1 << 12
	SampleStackUser  = 1 << 13
	SampleIdentifier = 1 << 16
)

// supported are the sample types Parse reads; others are an error.
const supported = SampleIP | SampleTID | SampleTime | SampleAddr | SampleCallchain | SampleIDBit |
	SampleCPU | SamplePeriod | SampleStreamID | SampleRegsUser | SampleStackUser | SampleIdentifier

// ABI of the user registers of a sample (enum perf_sample_regs_abi).
const (
	RegsABINone = 0
	RegsABI32   = 1
	RegsABI64   = 2
)

// x86 perf register numbers (enum perf_event_x86_regs) the walker needs.
const (
	RegBP    = 6
	RegSP    = 7
	RegIP    = 8
	RegFlags = 9
	RegCS    = 10
	RegSS    = 11
)

// Misc cpumode values (PERF_RECORD_MISC_CPUMODE_MASK of header.misc).
const (
	MiscCPUModeMask = 7
	MiscKernel      = 1
	MiscUser        = 2
)

// Format is what an event's records carry: its attribute's sample_type and
// sample_regs_user. SampleIDAll says non-sample records end with a
// sample_id (attr.sample_id_all).
type Format struct {
	SampleType  uint64
	RegsUser    uint64
	SampleIDAll bool
}

// Header is struct perf_event_header.
type Header struct {
	Type uint32
	Misc uint16
	Size uint16
}

// CPUMode is the header's cpumode: MiscKernel, MiscUser, ...
func (h Header) CPUMode() uint16 { return h.Misc & MiscCPUModeMask }

// SampleID is the struct sample_id that ends a non-sample record when
// sample_id_all is set.
type SampleID struct {
	PID, TID   uint32
	Time       uint64
	ID         uint64
	StreamID   uint64
	CPU        uint32
	Identifier uint64
}

// Sample is a PERF_RECORD_SAMPLE.
type Sample struct {
	Header
	Identifier, IP uint64
	PID, TID       uint32
	Time, Addr, ID uint64
	StreamID       uint64
	CPU            uint32
	Period         uint64
	// Callchain is every entry, context markers included.
	Callchain []uint64
	// Cookie is the entry after PERF_CONTEXT_USER_DEFERRED, 0 if the
	// callchain has none.
	Cookie uint64
	// RegsABI is RegsABINone, RegsABI32 or RegsABI64; Regs are the user
	// registers of Format.RegsUser, by perf register number.
	RegsABI uint64
	Regs    map[int]uint64
	// StackSize is the size asked for; Stack the bytes copied from the
	// user stack pointer up (dyn_size of them).
	StackSize uint64
	Stack     []byte
}

// Kernel returns the callchain's kernel entries (after PERF_CONTEXT_KERNEL),
// User its user entries (after PERF_CONTEXT_USER).
func (s *Sample) Kernel() []uint64 { return s.context(ContextKernel) }

// User returns the callchain's user entries (after PERF_CONTEXT_USER):
// none when the user part was deferred.
func (s *Sample) User() []uint64 { return s.context(ContextUser) }

func (s *Sample) context(want uint64) []uint64 {
	var out []uint64
	ctx := uint64(0)
	for _, e := range s.Callchain {
		if e >= ContextMax {
			ctx = e
			continue
		}
		if ctx == want {
			out = append(out, e)
		}
	}
	return out
}

// Deferred is a PERF_RECORD_CALLCHAIN_DEFERRED: the user callchain of
// every sample whose callchain ended with its cookie.
type Deferred struct {
	Header
	Cookie uint64
	IPs    []uint64
	SampleID
}

// Lost is a PERF_RECORD_LOST: Lost records were dropped.
type Lost struct {
	Header
	ID, Lost uint64
	SampleID
}

// Other is a record of a type this package does not read.
type Other struct {
	Header
	Data []byte
}

// Record is *Sample, *Deferred, *Lost or *Other.
type Record interface{ header() Header }

func (h Header) header() Header { return h }

// ErrShort is a record shorter than its header or its fields say.
var ErrShort = errors.New("record too short")

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b)-r.off < 8 {
		r.err = fmt.Errorf("%w: %d bytes left at offset %d, want 8", ErrShort, len(r.b)-r.off, r.off)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if uint64(len(r.b)-r.off) < n {
		r.err = fmt.Errorf("%w: %d bytes left at offset %d, want %d", ErrShort, len(r.b)-r.off, r.off, n)
		return nil
	}
	p := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return p
}

// ParseHeader reads a record's header.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < 8 {
		return Header{}, fmt.Errorf("%w: %d bytes, a header is 8", ErrShort, len(b))
	}
	return Header{Type: binary.LittleEndian.Uint32(b), Misc: binary.LittleEndian.Uint16(b[4:]), Size: binary.LittleEndian.Uint16(b[6:])}, nil
}

// Parse reads one record, b[:header.size], of an event of format f.
func Parse(b []byte, f Format) (Record, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return nil, err
	}
	if int(h.Size) < 8 || int(h.Size) > len(b) {
		return nil, fmt.Errorf("%w: header says %d bytes, have %d", ErrShort, h.Size, len(b))
	}
	if f.SampleType&^supported != 0 {
		return nil, fmt.Errorf("sample_type %#x: bits %#x are not read by this parser", f.SampleType, f.SampleType&^supported)
	}
	r := &reader{b: b[:h.Size], off: 8}
	var rec Record
	switch h.Type {
	case RecordSample:
		rec = parseSample(r, h, f)
	case RecordCallchainDeferred:
		d := &Deferred{Header: h, Cookie: r.u64()}
		nr := r.u64()
		if r.err == nil && nr > uint64(len(r.b)-r.off)/8 {
			return nil, fmt.Errorf("%w: deferred callchain of %d entries in a record of %d bytes", ErrShort, nr, h.Size)
		}
		for i := uint64(0); i < nr; i++ {
			d.IPs = append(d.IPs, r.u64())
		}
		if f.SampleIDAll {
			d.SampleID = sampleID(r, f)
		}
		rec = d
	case RecordLost:
		l := &Lost{Header: h, ID: r.u64(), Lost: r.u64()}
		if f.SampleIDAll {
			l.SampleID = sampleID(r, f)
		}
		rec = l
	default:
		rec = &Other{Header: h, Data: b[8:h.Size]}
	}
	if r.err != nil {
		return nil, fmt.Errorf("record type %d: %w", h.Type, r.err)
	}
	if h.Type == RecordSample || h.Type == RecordCallchainDeferred || h.Type == RecordLost && f.SampleIDAll {
		if r.off != len(r.b) {
			return nil, fmt.Errorf("record type %d: %d bytes left over after its fields", h.Type, len(r.b)-r.off)
		}
	}
	return rec, nil
}

func sampleID(r *reader, f Format) SampleID {
	var s SampleID
	st := f.SampleType
	if st&SampleTID != 0 {
		v := r.u64()
		s.PID, s.TID = uint32(v), uint32(v>>32)
	}
	if st&SampleTime != 0 {
		s.Time = r.u64()
	}
	if st&SampleIDBit != 0 {
		s.ID = r.u64()
	}
	if st&SampleStreamID != 0 {
		s.StreamID = r.u64()
	}
	if st&SampleCPU != 0 {
		s.CPU = uint32(r.u64())
	}
	if st&SampleIdentifier != 0 {
		s.Identifier = r.u64()
	}
	return s
}

func parseSample(r *reader, h Header, f Format) *Sample {
	s := &Sample{Header: h}
	st := f.SampleType
	if st&SampleIdentifier != 0 {
		s.Identifier = r.u64()
	}
	if st&SampleIP != 0 {
		s.IP = r.u64()
	}
	if st&SampleTID != 0 {
		v := r.u64()
		s.PID, s.TID = uint32(v), uint32(v>>32)
	}
	if st&SampleTime != 0 {
		s.Time = r.u64()
	}
	if st&SampleAddr != 0 {
		s.Addr = r.u64()
	}
	if st&SampleIDBit != 0 {
		s.ID = r.u64()
	}
	if st&SampleStreamID != 0 {
		s.StreamID = r.u64()
	}
	if st&SampleCPU != 0 {
		s.CPU = uint32(r.u64())
	}
	if st&SamplePeriod != 0 {
		s.Period = r.u64()
	}
	if st&SampleCallchain != 0 {
		nr := r.u64()
		if r.err == nil && nr > uint64(len(r.b)-r.off)/8 {
			r.err = fmt.Errorf("%w: callchain of %d entries at offset %d", ErrShort, nr, r.off)
			return s
		}
		s.Callchain = make([]uint64, 0, nr)
		for i := uint64(0); i < nr; i++ {
			s.Callchain = append(s.Callchain, r.u64())
		}
		for i, e := range s.Callchain {
			if e == ContextUserDeferred && i+1 < len(s.Callchain) {
				s.Cookie = s.Callchain[i+1]
			}
		}
	}
	if st&SampleRegsUser != 0 {
		s.RegsABI = r.u64()
		if s.RegsABI != RegsABINone {
			s.Regs = map[int]uint64{}
			for m := f.RegsUser; m != 0; m &= m - 1 {
				s.Regs[bits.TrailingZeros64(m)] = r.u64()
			}
		}
	}
	if st&SampleStackUser != 0 {
		s.StackSize = r.u64()
		if s.StackSize != 0 {
			data := r.bytes(s.StackSize)
			dyn := r.u64()
			if r.err == nil && dyn > s.StackSize {
				r.err = fmt.Errorf("stack copy dyn_size %d larger than its size %d", dyn, s.StackSize)
				return s
			}
			if r.err == nil {
				s.Stack = data[:dyn]
			}
		}
	}
	return s
}

// Records splits the bytes of a ring's data area, from offset tail to head
// (positions that only grow; the area is len(data) bytes and a record may
// wrap around its end), into records of format f. It stops at the first
// record it cannot read and returns what it read with the error.
func Records(data []byte, tail, head uint64, f Format) ([]Record, error) {
	size := uint64(len(data))
	if size == 0 || size&(size-1) != 0 {
		return nil, fmt.Errorf("ring data area of %d bytes: want a power of two", size)
	}
	if head < tail || head-tail > size {
		return nil, fmt.Errorf("head %d and tail %d do not fit a ring of %d bytes", head, tail, size)
	}
	at := func(pos, n uint64) []byte {
		out := make([]byte, n)
		for i := uint64(0); i < n; i++ {
			out[i] = data[(pos+i)%size]
		}
		return out
	}
	var recs []Record
	for tail < head {
		if head-tail < 8 {
			return recs, fmt.Errorf("%w: %d bytes at %d, less than a header", ErrShort, head-tail, tail)
		}
		h, _ := ParseHeader(at(tail, 8))
		if h.Size < 8 || uint64(h.Size) > head-tail {
			return recs, fmt.Errorf("%w: record at %d says %d bytes, %d are there", ErrShort, tail, h.Size, head-tail)
		}
		rec, err := Parse(at(tail, uint64(h.Size)), f)
		if err != nil {
			return recs, fmt.Errorf("record at %d: %w", tail, err)
		}
		recs = append(recs, rec)
		tail += uint64(h.Size)
	}
	return recs, nil
}
