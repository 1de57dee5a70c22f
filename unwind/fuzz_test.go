package unwind

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"
)

// fuzzInput reads fields from fuzz data, zero when it runs out.
type fuzzInput struct{ b []byte }

func (in *fuzzInput) u8() byte {
	if len(in.b) == 0 {
		return 0
	}
	v := in.b[0]
	in.b = in.b[1:]
	return v
}

func (in *fuzzInput) u64() uint64 {
	var p [8]byte
	n := copy(p[:], in.b)
	in.b = in.b[n:]
	return binary.LittleEndian.Uint64(p[:])
}

// fuzzCase turns fuzz data into a configuration, registers and memory.
func fuzzCase(t *testing.T, data []byte) (Config, Regs, Segments) {
	in := &fuzzInput{data}
	flags := in.u8()
	var cfg Config
	switch flags >> 1 & 3 {
	case 0:
		cfg, _ = X86_64(11, 14)
	case 1:
		cfg, _ = X86_64(11, 12)
	case 2: // an arbitrary frame description
		f := Frame{
			CFAOff: int32(in.u64()),
			RAOff:  int32(in.u64()),
			FPOff:  int32(in.u64()),
			UseFP:  in.u8()&1 == 1,
		}
		cfg = Config{LongSize: 8, FP: &f, CompatFP: &f, SegmentBases: flags&0x40 != 0, MaxEntries: 511}
	case 3:
		cfg = Config{LongSize: 4, FP: &FrameX86Compat, MaxEntries: 1023}
	}
	if m := int(in.u8()); m != 0 && m < cfg.MaxEntries {
		cfg.MaxEntries = m
	}
	cfg.NextStub = flags&0x08 != 0 && flags&0x10 != 0
	if flags&0x20 != 0 {
		cfg.UserMax = 0
	}
	regs := Regs{Compat: flags&1 == 1, IP: in.u64(), SP: in.u64(), FP: in.u64(), CSBase: in.u64(), SSBase: in.u64()}
	base := in.u64()
	mem := Segments{{Addr: base, Data: in.b}}
	if base+uint64(len(in.b)) < base {
		mem[0].Data = in.b[:-base]
	}
	return cfg, regs, mem
}

// FuzzWalk walks arbitrary memory from arbitrary registers: the walk must
// end, within the entry limit, with entries that follow the stop rules.
func FuzzWalk(f *testing.F) {
	if snap, err := os.ReadFile("testdata/deep64.snap"); err == nil {
		if s, err := ParseSnapshot(bytes.NewReader(snap)); err == nil {
			seed := []byte{0, 0}
			for _, v := range []uint64{s.Regs.IP, s.Regs.SP, s.Regs.FP, 0, 0, s.Stack[0].Addr} {
				seed = binary.LittleEndian.AppendUint64(seed, v)
			}
			f.Add(append(seed, s.Stack[0].Data...))
		}
	}
	f.Add([]byte{})
	f.Add([]byte{1, 5, 0x10, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{4, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, regs, mem := fuzzCase(t, data)
		tr, err := cfg.Walk(mem, regs)
		if err != nil {
			t.Fatal(err)
		}
		n := len(tr.Entries)
		if n < 1 || n > cfg.MaxEntries {
			t.Fatalf("%d entries, limit %d", n, cfg.MaxEntries)
		}
		if (tr.Stop == StopMaxEntries) != (n == cfg.MaxEntries) || tr.Stop == StopNone {
			t.Fatalf("stop %v with %d of %d entries", tr.Stop, n, cfg.MaxEntries)
		}
		if (tr.Stop == StopFaultRA || tr.Stop == StopFaultFP) != (tr.Fault != nil) || tr.Fault != nil && !errors.Is(tr.Fault, ErrFault) {
			t.Fatalf("stop %v, fault %v", tr.Stop, tr.Fault)
		}
		mask := ^uint64(0)
		if cfg.LongSize == 4 {
			mask = 0xffffffff
		}
		compat := tr.Kind == KindCompatFP
		var csBase uint64
		if compat && cfg.SegmentBases {
			csBase = regs.CSBase & mask
		}
		if tr.Entries[0].IP != (regs.IP+csBase)&mask {
			t.Fatalf("first entry %#x, ip %#x", tr.Entries[0].IP, regs.IP)
		}
		if cfg.NextStub {
			for _, e := range tr.Entries {
				if e != tr.Entries[0] {
					t.Fatalf("stub walk moved: %+v", e)
				}
			}
			return
		}
		frame := cfg.FP
		if compat {
			frame = cfg.CompatFP
		}
		for i := 1; i < n; i++ {
			e, prev := tr.Entries[i], tr.Entries[i-1]
			if e.SP <= prev.SP {
				t.Fatalf("entry %d: sp %#x not above %#x", i, e.SP, prev.SP)
			}
			// The entry is the word at cfa + ra_off, cfa being its sp.
			size := cfg.LongSize
			if compat {
				size = 4
			}
			p := make([]byte, size)
			if err := mem.ReadAt(p, (e.SP+uint64(int64(frame.RAOff)))&mask); err != nil {
				t.Fatalf("entry %d read from unreadable memory: %v", i, err)
			}
			ra := uint64(binary.LittleEndian.Uint32(p))
			if size == 8 {
				ra = binary.LittleEndian.Uint64(p)
			}
			if e.IP != (ra+csBase)&mask {
				t.Fatalf("entry %d: ip %#x, memory holds %#x", i, e.IP, ra)
			}
		}
	})
}

// BenchmarkWalkDeep walks the captured 600-frame stack of testdata/deep64.snap
// to the 511-entry limit.
func BenchmarkWalkDeep(b *testing.B) {
	data, err := os.ReadFile("testdata/deep64.snap")
	if err != nil {
		b.Fatal(err)
	}
	s, err := ParseSnapshot(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	cfg, _ := X86_64(11, 14)
	frames := 0
	b.ReportAllocs()
	for b.Loop() {
		tr, err := cfg.Walk(s.Memory(), s.Regs)
		if err != nil {
			b.Fatal(err)
		}
		frames += len(tr.Entries)
	}
	if frames/b.N != 511 {
		b.Fatalf("%d frames per walk", frames/b.N)
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}
