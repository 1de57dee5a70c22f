package unwind

import (
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"kpatch/spec"
	"kpatch/templates/linux"
)

// stack builds test memory: words of a given size from an address up.
type stack struct {
	addr  uint64
	word  int
	order binary.ByteOrder
	data  []byte
}

func newStack(addr uint64, word int) *stack {
	return &stack{addr: addr, word: word, order: binary.LittleEndian}
}

// put stores words at addr, growing the stack as needed.
func (s *stack) put(addr uint64, words ...uint64) *stack {
	for _, w := range words {
		off := int(addr - s.addr)
		for len(s.data) < off+s.word {
			s.data = append(s.data, 0)
		}
		if s.word == 4 {
			s.order.PutUint32(s.data[off:], uint32(w))
		} else {
			s.order.PutUint64(s.data[off:], w)
		}
		addr += uint64(s.word)
	}
	return s
}

func (s *stack) mem() Segments { return Segments{{Addr: s.addr, Data: s.data}} }

func mustX86(t *testing.T, patch int) Config {
	t.Helper()
	c, err := X86_64(11, patch)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// chain64 is three 64-bit frames at 0x7000, 0x7020 and 0x7040: each holds
// the caller's frame pointer and a return address; the outermost saved
// frame pointer is 0.
func chain64() Segments {
	return newStack(0x7000, 8).
		put(0x7000, 0x7020, 0x401111).
		put(0x7020, 0x7040, 0x402222).
		put(0x7040, 0, 0x403333).
		put(0x7050, 0xdead).mem()
}

func TestWalk(t *testing.T) {
	x14 := mustX86(t, 14)
	x12 := mustX86(t, 12)
	small := x14
	small.MaxEntries = 2
	noFP := Config{LongSize: 8, MaxEntries: 511}
	stub := Config{LongSize: 8, MaxEntries: 4, NextStub: true, FP: &FrameX86_64}
	spFrame := Config{LongSize: 8, MaxEntries: 10, FP: &Frame{CFAOff: 16, RAOff: -8}}
	fpNoRestore := Config{LongSize: 8, MaxEntries: 10, FP: &Frame{CFAOff: 16, RAOff: -8, UseFP: true}}
	long4 := Config{LongSize: 4, MaxEntries: 10, FP: &Frame{CFAOff: 8, RAOff: -4, FPOff: -8, UseFP: true}}
	be := Config{LongSize: 8, MaxEntries: 10, FP: &FrameX86_64, ByteOrder: binary.BigEndian}
	beStack := newStack(0x7000, 8)
	beStack.order = binary.BigEndian
	beStack.put(0x7000, 0, 0x401234)

	tests := []struct {
		name   string
		cfg    Config
		mem    Memory
		regs   Regs
		kind   Kind
		want   []Entry
		stop   Stop
		faults bool
	}{
		{
			name: "chain to a zero frame pointer",
			cfg:  x14, mem: chain64(), regs: Regs{IP: 0x400000, SP: 0x6ff0, FP: 0x7000},
			kind: KindFP,
			want: []Entry{{0x400000, 0x6ff0, 0x7000}, {0x401111, 0x7010, 0x7020}, {0x402222, 0x7030, 0x7040}, {0x403333, 0x7050, 0}},
			stop: StopWrongDirection, // cfa = 0 + 16 <= sp
		},
		{
			name: "frame pointer below the stack pointer",
			cfg:  x14, mem: chain64(), regs: Regs{IP: 0x400000, SP: 0x7100, FP: 0x7000},
			kind: KindFP, want: []Entry{{0x400000, 0x7100, 0x7000}}, stop: StopWrongDirection,
		},
		{
			name: "cfa equal to sp stops",
			cfg:  x14, mem: chain64(), regs: Regs{IP: 1, SP: 0x7010, FP: 0x7000},
			kind: KindFP, want: []Entry{{1, 0x7010, 0x7000}}, stop: StopWrongDirection,
		},
		{
			name: "cfa one above sp steps",
			cfg:  x14, mem: chain64(), regs: Regs{IP: 1, SP: 0x700f, FP: 0x7000},
			kind: KindFP, want: []Entry{{1, 0x700f, 0x7000}, {0x401111, 0x7010, 0x7020}, {0x402222, 0x7030, 0x7040}, {0x403333, 0x7050, 0}},
			stop: StopWrongDirection,
		},
		{
			name: "return address unmapped",
			cfg:  x14, mem: chain64(), regs: Regs{IP: 1, SP: 0x100, FP: 0x9000},
			kind: KindFP, want: []Entry{{1, 0x100, 0x9000}}, stop: StopFaultRA, faults: true,
		},
		{
			name: "saved frame pointer unmapped, return address mapped",
			cfg:  x14, mem: newStack(0x7000, 8).put(0x7000, 0x401234).mem(), regs: Regs{IP: 1, SP: 0x6000, FP: 0x6ff8},
			kind: KindFP, want: []Entry{{1, 0x6000, 0x6ff8}}, stop: StopFaultFP, faults: true,
		},
		{
			name: "return address read reaching TASK_SIZE_MAX",
			cfg:  x14,
			mem:  newStack(TaskSizeMaxX86_64-16, 8).put(TaskSizeMaxX86_64-16, 0, 0).mem(),
			regs: Regs{IP: 1, SP: TaskSizeMaxX86_64 - 32, FP: TaskSizeMaxX86_64 - 12},
			kind: KindFP, want: []Entry{{1, TaskSizeMaxX86_64 - 32, TaskSizeMaxX86_64 - 12}}, stop: StopFaultRA, faults: true,
		},
		{
			name: "cfa wraps around 2^64",
			cfg:  x14, mem: chain64(), regs: Regs{IP: 1, SP: 0x7000, FP: ^uint64(0) - 7},
			kind: KindFP, want: []Entry{{1, 0x7000, ^uint64(0) - 7}}, stop: StopWrongDirection,
		},
		{
			name: "entry limit",
			cfg:  small, mem: chain64(), regs: Regs{IP: 0x400000, SP: 0x6ff0, FP: 0x7000},
			kind: KindFP, want: []Entry{{0x400000, 0x6ff0, 0x7000}, {0x401111, 0x7010, 0x7020}}, stop: StopMaxEntries,
		},
		{
			name: "no unwinder: the ip alone",
			cfg:  noFP, mem: chain64(), regs: Regs{IP: 0x400000, SP: 0x6ff0, FP: 0x7000},
			kind: KindNone, want: []Entry{{0x400000, 0x6ff0, 0x7000}}, stop: StopNoUnwinder,
		},
		{
			name: "patch 1 stub repeats the ip up to the limit",
			cfg:  stub, mem: chain64(), regs: Regs{IP: 0x400000, SP: 0x6ff0, FP: 0x7000},
			kind: KindFP, want: []Entry{{0x400000, 0x6ff0, 0x7000}, {0x400000, 0x6ff0, 0x7000}, {0x400000, 0x6ff0, 0x7000}, {0x400000, 0x6ff0, 0x7000}},
			stop: StopMaxEntries,
		},
		{
			name: "return address zero is an entry",
			cfg:  x14, mem: newStack(0x7000, 8).put(0x7000, 0x7020, 0).put(0x7020, 0, 0).mem(), regs: Regs{IP: 1, SP: 0x6ff0, FP: 0x7000},
			kind: KindFP, want: []Entry{{1, 0x6ff0, 0x7000}, {0, 0x7010, 0x7020}, {0, 0x7030, 0}}, stop: StopWrongDirection,
		},
		{
			name: "frame from the stack pointer keeps fp",
			cfg:  spFrame, mem: newStack(0x7000, 8).put(0x7008, 0x401111).put(0x7018, 0x402222).mem(), regs: Regs{IP: 1, SP: 0x7000, FP: 0xabc},
			kind: KindFP, want: []Entry{{1, 0x7000, 0xabc}, {0x401111, 0x7010, 0xabc}, {0x402222, 0x7020, 0xabc}}, stop: StopFaultRA, faults: true,
		},
		{
			name: "fp_off zero does not restore fp",
			cfg:  fpNoRestore, mem: newStack(0x7000, 8).put(0x7000, 0x9999, 0x401111).mem(), regs: Regs{IP: 1, SP: 0x6ff0, FP: 0x7000},
			kind: KindFP, want: []Entry{{1, 0x6ff0, 0x7000}, {0x401111, 0x7010, 0x7000}}, stop: StopWrongDirection,
		},
		{
			name: "4-byte longs wrap at 2^32",
			cfg:  long4, mem: newStack(0x7000, 4).put(0x7000, 0xfffffffc, 0x8048111).mem(), regs: Regs{IP: 0x8048000, SP: 0x6ff0, FP: 0x7000},
			kind: KindFP, want: []Entry{{0x8048000, 0x6ff0, 0x7000}, {0x8048111, 0x7008, 0xfffffffc}}, stop: StopWrongDirection,
		},
		{
			name: "big-endian memory",
			cfg:  be, mem: beStack.mem(), regs: Regs{IP: 1, SP: 0x6ff0, FP: 0x7000},
			kind: KindFP, want: []Entry{{1, 0x6ff0, 0x7000}, {0x401234, 0x7010, 0}}, stop: StopWrongDirection,
		},
		{
			name: "compat: 4-byte words, flat segments",
			cfg:  x14,
			mem:  newStack(0xffffd000, 4).put(0xffffd000, 0xffffd010, 0x8049111).put(0xffffd010, 0, 0x8049222).mem(),
			regs: Regs{IP: 0x8049000, SP: 0xffffcff0, FP: 0xffffd000, Compat: true},
			kind: KindCompatFP,
			want: []Entry{{0x8049000, 0xffffcff0, 0xffffd000}, {0x8049111, 0xffffd008, 0xffffd010}, {0x8049222, 0xffffd018, 0}},
			stop: StopWrongDirection,
		},
		{
			name: "compat: segment bases at start and at each step",
			cfg:  x14,
			// Linear addresses are ss_base + offset; saved values are offsets.
			mem:  newStack(0x10000d000, 4).put(0x10000d000, 0xd010, 0x111).put(0x10000d010, 0xd020, 0x222).put(0x10000d020, 0x10, 0x333).mem(),
			regs: Regs{IP: 0x100, SP: 0xcff0, FP: 0xd000, Compat: true, CSBase: 0x20000000, SSBase: 0x100000000},
			kind: KindCompatFP,
			want: []Entry{
				{0x20000100, 0x10000cff0, 0x10000d000},
				{0x20000111, 0x10000d008, 0x10000d010},
				{0x20000222, 0x10000d018, 0x10000d020},
				{0x20000333, 0x10000d028, 0x100000010}, // the next cfa, fp + 8, is below sp
			},
			stop: StopWrongDirection,
		},
		{
			name: "compat at patch 12: walked as 64-bit, no bases",
			cfg:  x12,
			mem:  newStack(0xffffd000, 4).put(0xffffd000, 0xffffd010, 0x8049111, 0x11, 0x22).mem(),
			regs: Regs{IP: 0x8049000, SP: 0xffffcff0, FP: 0xffffd000, Compat: true, CSBase: 0x1000, SSBase: 0x1000},
			kind: KindFP,
			want: []Entry{{0x8049000, 0xffffcff0, 0xffffd000}, {0x2200000011, 0xffffd010, 0x08049111ffffd010}},
			stop: StopFaultRA, faults: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := tc.cfg.Walk(tc.mem, tc.regs)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Kind != tc.kind {
				t.Errorf("kind %v, want %v", tr.Kind, tc.kind)
			}
			if !reflect.DeepEqual(tr.Entries, tc.want) {
				t.Errorf("entries\n got %#v\nwant %#v", tr.Entries, tc.want)
			}
			if tr.Stop != tc.stop {
				t.Errorf("stop %v, want %v", tr.Stop, tc.stop)
			}
			if tc.faults != (tr.Fault != nil) || tc.faults && !errors.Is(tr.Fault, ErrFault) {
				t.Errorf("fault %v, want one: %v", tr.Fault, tc.faults)
			}
			ips := tr.IPs()
			for i, e := range tc.want {
				if ips[i] != e.IP {
					t.Errorf("IPs()[%d] = %#x, want %#x", i, ips[i], e.IP)
				}
			}
		})
	}
}

func TestDeepChainLimit(t *testing.T) {
	// 600 frames, each 32 bytes above the last.
	s := newStack(0x10000, 8)
	for i := range 600 {
		fp := 0x10000 + uint64(i)*32
		s.put(fp, fp+32, 0x400000+uint64(i))
	}
	for _, c := range []struct {
		patch, max int
	}{{12, 511}, {13, 511}, {14, 511}} {
		tr, err := mustX86(t, c.patch).Walk(s.mem(), Regs{IP: 0x3fffff, SP: 0xfff0, FP: 0x10000})
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Entries) != c.max || tr.Stop != StopMaxEntries {
			t.Fatalf("patch %d: %d entries, stop %v; want %d, %v", c.patch, len(tr.Entries), tr.Stop, c.max, StopMaxEntries)
		}
		if tr.Entries[0].IP != 0x3fffff || tr.Entries[510].IP != 0x400000+509 {
			t.Errorf("patch %d: entries 0 and 510 are %#x %#x", c.patch, tr.Entries[0].IP, tr.Entries[510].IP)
		}
	}
	// With no limit in reach the walk runs off the end of the chain.
	cfg := mustX86(t, 14)
	cfg.MaxEntries = 1000
	tr, _ := cfg.Walk(s.mem(), Regs{IP: 0x3fffff, SP: 0xfff0, FP: 0x10000})
	if len(tr.Entries) != 601 || tr.Stop != StopFaultRA {
		t.Errorf("limit 1000: %d entries, stop %v; want 601, fault-ra", len(tr.Entries), tr.Stop)
	}
}

func TestUnwinderIterates(t *testing.T) {
	u, err := mustX86(t, 14).Start(chain64(), Regs{IP: 0x400000, SP: 0x6ff0, FP: 0x7000})
	if err != nil {
		t.Fatal(err)
	}
	var ips []uint64
	for !u.State.Done {
		ips = append(ips, u.State.IP)
		u.Next()
	}
	if want := []uint64{0x400000, 0x401111, 0x402222, 0x403333}; !reflect.DeepEqual(ips, want) {
		t.Errorf("ips %#x, want %#x", ips, want)
	}
	if u.Stop != StopWrongDirection || u.Next() {
		t.Errorf("after the end: stop %v, Next must stay false", u.Stop)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{LongSize: 8, FP: &FrameX86_64},                 // MaxEntries 0: unwind_user() returns -EINVAL
		{LongSize: 3, FP: &FrameX86_64, MaxEntries: 10}, // no such long
	} {
		if _, err := c.Walk(chain64(), Regs{}); err == nil {
			t.Errorf("%+v: Walk succeeded", c)
		}
	}
}

// TestX86_64 checks what the spec's walker facts make of each revision's
// patches: no unwinder before x86 selects it, compat from v11's and v12's
// compat patch on, v13's and v14's stricter checks, v14's 510 entries (the
// unwind_completed mask shares the cache's page), and patch numbers a
// revision lacks refused.
func TestX86_64(t *testing.T) {
	for _, tc := range []struct {
		version, patch int
		err            bool
		noUnw          bool
		compat         bool
		fpBelowSP      bool
		align          string
		max            int // MaxEntries; 0: 511
	}{
		{version: 11, patch: 0, err: true}, {version: 11, patch: 1, err: true, noUnw: true}, {version: 11, patch: 11, err: true, noUnw: true},
		{version: 11, patch: 12}, {version: 11, patch: 13}, {version: 11, patch: 14, compat: true}, {version: 11, patch: 15, err: true},
		{version: 12, patch: 13}, {version: 12, patch: 14, compat: true},
		{version: 13, patch: 14, compat: true, fpBelowSP: true, align: "ra"},
		{version: 14, patch: 10, err: true, noUnw: true}, {version: 14, patch: 11, fpBelowSP: true, align: "cfa", max: 510},
		{version: 14, patch: 12, fpBelowSP: true, align: "cfa", max: 510}, {version: 14, patch: 13, err: true},
	} {
		c, err := X86_64(tc.version, tc.patch)
		if (err != nil) != tc.err || tc.noUnw != errors.Is(err, ErrNoUnwinder) {
			t.Errorf("v%d patch %d: error %v", tc.version, tc.patch, err)
			continue
		}
		if err != nil {
			continue
		}
		if tc.max == 0 {
			tc.max = 511 // the cache's page after an unsigned int header
		}
		if c.LongSize != 8 || c.FP == nil || *c.FP != FrameX86_64 || c.MaxEntries != tc.max || c.UserMax != TaskSizeMaxX86_64 {
			t.Errorf("v%d patch %d: %+v", tc.version, tc.patch, c)
		}
		if (c.CompatFP != nil) != tc.compat || c.SegmentBases != tc.compat || tc.compat && *c.CompatFP != FrameX86Compat {
			t.Errorf("v%d patch %d: compat frame %v, segment bases %v", tc.version, tc.patch, c.CompatFP, c.SegmentBases)
		}
		if c.StopFPBelowSP != tc.fpBelowSP || c.Align != tc.align {
			t.Errorf("v%d patch %d: fp-below-sp %v align %q, want %v %q", tc.version, tc.patch, c.StopFPBelowSP, c.Align, tc.fpBelowSP, tc.align)
		}
	}
	if _, err := X86_64(14, 14); err == nil || !strings.Contains(err.Error(), "v14 has patches 1 to 12, not 14") {
		t.Errorf("v14 patch 14: %v", err)
	}
}

// maxEntriesV11 is the limit the walker facts give after patch of v11 for
// a kernel with longSize-byte longs: none before the faultable patch.
func maxEntriesV11(t testing.TB, patch, longSize int) int {
	t.Helper()
	sp, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := sp.Revision(11)
	f, err := r.Facts(WalkerFacts, patch)
	if err != nil {
		t.Fatal(err)
	}
	switch v := f["max-entries"]; v {
	case "":
		return 0
	case "cache-page":
		return CacheEntries(longSize)
	default:
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}

func TestMaxEntries(t *testing.T) {
	for _, tc := range []struct{ patch, long, want int }{
		{1, 8, 0}, {3, 8, 0}, {4, 8, 512}, {4, 4, 512}, {5, 8, 511}, {14, 8, 511}, {5, 4, 1023}, {14, 4, 1023},
	} {
		if got := maxEntriesV11(t, tc.patch, tc.long); got != tc.want {
			t.Errorf("max entries after v11 patch %d with %d-byte longs = %d, want %d", tc.patch, tc.long, got, tc.want)
		}
		if tc.patch >= 5 {
			// A header padded to a long, then the entries, fit in 4K.
			if used := tc.long + tc.want*tc.long; used > 4096 || used+tc.long <= 4096 {
				t.Errorf("patch %d, %d-byte longs: %d bytes used of 4096", tc.patch, tc.long, used)
			}
		}
	}
}

func TestStrings(t *testing.T) {
	for v, want := range map[interface{ String() string }]string{
		KindNone: "none", KindFP: "fp", KindCompatFP: "compat-fp", Kind(9): "Kind(9)",
		StopNone: "none", StopNoUnwinder: "no-unwinder", StopWrongDirection: "wrong-direction",
		StopFaultRA: "fault-ra", StopFaultFP: "fault-fp", StopMaxEntries: "max-entries", Stop(42): "Stop(42)",
		FrameX86_64: "{.cfa_off=16, .ra_off=-8, .fp_off=-16, .use_fp=true}",
	} {
		if got := v.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", v, got, want)
		}
	}
}

func TestSegments(t *testing.T) {
	if _, err := NewSegments(Segment{0x1000, make([]byte, 16)}, Segment{0x100f, []byte{1}}); err == nil {
		t.Error("overlapping segments accepted")
	}
	s, err := NewSegments(Segment{0x1004, []byte{5, 6, 7, 8}}, Segment{0x1000, []byte{1, 2, 3, 4}}, Segment{0x2000, nil})
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0].Addr != 0x1000 {
		t.Fatalf("NewSegments: %+v", s)
	}
	p := make([]byte, 6)
	if err := s.ReadAt(p, 0x1001); err != nil || !reflect.DeepEqual(p, []byte{2, 3, 4, 5, 6, 7}) {
		t.Errorf("read across segments: %v %v", p, err)
	}
	for _, addr := range []uint64{0xfff, 0x1005, 0x2000} {
		err := s.ReadAt(make([]byte, 4), addr)
		var fe *FaultError
		if !errors.As(err, &fe) || fe.Addr != addr || fe.Len != 4 || !errors.Is(err, ErrFault) {
			t.Errorf("read at %#x: %v", addr, err)
		}
	}
	top := Segments{{Addr: ^uint64(0) - 1, Data: []byte{1, 2}}}
	if err := top.ReadAt(make([]byte, 2), ^uint64(0)-1); err != nil {
		t.Errorf("read of the last two bytes: %v", err)
	}
	if err := top.ReadAt(make([]byte, 3), ^uint64(0)-1); err == nil {
		t.Error("read past 2^64 succeeded")
	}
}

func TestProcessMemory(t *testing.T) {
	m, err := OpenProcess(os.Getpid())
	if err != nil {
		t.Skipf("cannot open /proc/self/mem: %v", err)
	}
	defer m.Close()
	want := []byte("frame pointers all the way down")
	got := make([]byte, len(want))
	if err := m.ReadAt(got, uint64(uintptr(unsafe.Pointer(&want[0])))); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("read %q", got)
	}
	err = m.ReadAt(got, 0x10)
	if !errors.Is(err, ErrFault) || !strings.Contains(err.Error(), "0x10") {
		t.Errorf("read of page 0: %v", err)
	}
}
