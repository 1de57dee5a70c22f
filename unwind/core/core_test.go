package core_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/unwind"
	"kpatch/unwind/core"
)

// fakeCore writes small ELF core files for the unit tests.
type fakeCore struct {
	is32    bool
	machine uint16 // default: EM_X86_64 or EM_386
	typ     uint16 // default: ET_CORE
	notes   []fakeNote
	loads   []fakeLoad
}

type fakeNote struct {
	name string
	typ  uint32
	desc []byte
}

type fakeLoad struct {
	vaddr uint64
	data  []byte // the file bytes
	memsz uint64 // default: len(data)
}

var le = binary.LittleEndian

func (f fakeCore) bytes() []byte {
	ehsize, phsize := 64, 56
	if f.is32 {
		ehsize, phsize = 52, 32
	}
	nph := 1 + len(f.loads)
	var notes []byte
	for _, n := range f.notes {
		notes = le.AppendUint32(notes, uint32(len(n.name)+1))
		notes = le.AppendUint32(notes, uint32(len(n.desc)))
		notes = le.AppendUint32(notes, n.typ)
		notes = append(notes, n.name...)
		notes = append(notes, 0)
		for len(notes)%4 != 0 {
			notes = append(notes, 0)
		}
		notes = append(notes, n.desc...)
		for len(notes)%4 != 0 {
			notes = append(notes, 0)
		}
	}
	off := uint64(ehsize + nph*phsize)
	var out []byte
	out = append(out, 0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	machine, typ := f.machine, f.typ
	if machine == 0 {
		machine = 62
		if f.is32 {
			machine = 3
		}
	}
	if typ == 0 {
		typ = 4
	}
	if f.is32 {
		out[4] = 1
	}
	out = le.AppendUint16(out, typ)
	out = le.AppendUint16(out, machine)
	out = le.AppendUint32(out, 1)
	addr := func(v uint64) {
		if f.is32 {
			out = le.AppendUint32(out, uint32(v))
		} else {
			out = le.AppendUint64(out, v)
		}
	}
	addr(0)              // entry
	addr(uint64(ehsize)) // phoff
	addr(0)              // shoff
	out = le.AppendUint32(out, 0)
	out = le.AppendUint16(out, uint16(ehsize))
	out = le.AppendUint16(out, uint16(phsize))
	out = le.AppendUint16(out, uint16(nph))
	out = le.AppendUint16(out, 0)
	out = le.AppendUint16(out, 0)
	out = le.AppendUint16(out, 0)
	phdr := func(typ uint32, off, vaddr, filesz, memsz uint64) {
		if f.is32 {
			for _, v := range []uint32{typ, uint32(off), uint32(vaddr), 0, uint32(filesz), uint32(memsz), 4, 1} {
				out = le.AppendUint32(out, v)
			}
			return
		}
		out = le.AppendUint32(out, typ)
		out = le.AppendUint32(out, 4)
		for _, v := range []uint64{off, vaddr, 0, filesz, memsz, 1} {
			out = le.AppendUint64(out, v)
		}
	}
	phdr(4, off, 0, uint64(len(notes)), 0)
	off += uint64(len(notes))
	for _, l := range f.loads {
		memsz := l.memsz
		if memsz == 0 {
			memsz = uint64(len(l.data))
		}
		phdr(1, off, l.vaddr, uint64(len(l.data)), memsz)
		off += uint64(len(l.data))
	}
	out = append(out, notes...)
	for _, l := range f.loads {
		out = append(out, l.data...)
	}
	return out
}

// prstatus builds an NT_PRSTATUS note for a thread.
func prstatus(is32 bool, pid int, sig int, ip, sp, bp, cs, ss uint64) fakeNote {
	if is32 {
		d := make([]byte, 144)
		le.PutUint16(d[12:], uint16(sig))
		le.PutUint32(d[24:], uint32(pid))
		for i, v := range map[int]uint64{5: bp, 12: ip, 13: cs, 15: sp, 16: ss} {
			le.PutUint32(d[72+4*i:], uint32(v))
		}
		return fakeNote{"CORE", 1, d}
	}
	d := make([]byte, 336)
	le.PutUint16(d[12:], uint16(sig))
	le.PutUint32(d[32:], uint32(pid))
	for i, v := range map[int]uint64{4: bp, 16: ip, 17: cs, 19: sp, 20: ss} {
		le.PutUint64(d[112+8*i:], v)
	}
	return fakeNote{"CORE", 1, d}
}

func ntFile(is32 bool, page uint64, maps []unwind.Mapping) fakeNote {
	var d []byte
	w := func(v uint64) {
		if is32 {
			d = le.AppendUint32(d, uint32(v))
		} else {
			d = le.AppendUint64(d, v)
		}
	}
	w(uint64(len(maps)))
	w(page)
	for _, m := range maps {
		w(m.Start)
		w(m.End)
		w(m.Offset / page)
	}
	for _, m := range maps {
		d = append(d, m.Path...)
		d = append(d, 0)
	}
	return fakeNote{"CORE", 0x46494c45, d}
}

func auxv(is32 bool, kv ...uint64) fakeNote {
	var d []byte
	for _, v := range append(kv, 0, 0) {
		if is32 {
			d = le.AppendUint32(d, uint32(v))
		} else {
			d = le.AppendUint64(d, v)
		}
	}
	return fakeNote{"CORE", 6, d}
}

func words(is32 bool, vs ...uint64) []byte {
	var d []byte
	for _, v := range vs {
		if is32 {
			d = le.AppendUint32(d, uint32(v))
		} else {
			d = le.AppendUint64(d, v)
		}
	}
	return d
}

func TestCoreThreadsAndWalk(t *testing.T) {
	for _, is32 := range []bool{false, true} {
		name := map[bool]string{false: "64", true: "32"}[is32]
		t.Run(name, func(t *testing.T) {
			// A stack of two frames at 0x7000, then a return to 0x401300.
			stack := words(is32, 0x7010, 0x401200, 0, 0x401300)
			if !is32 {
				stack = append(stack, make([]byte, 16)...)
			}
			fc := fakeCore{is32: is32,
				notes: []fakeNote{
					prstatus(is32, 100, 11, 0x401100, 0x6ff0, 0x7000, 0x33, 0x2b),
					{"LINUX", 0x202, []byte{1, 2, 3}}, // another owner's note, skipped
					prstatus(is32, 101, 0, 0x402000, 0x8000, 0x8000, 0x23, 0x2b),
					auxv(is32, core.AtEntry, 0x401000),
				},
				loads: []fakeLoad{{vaddr: 0x6ff0, data: append(make([]byte, 16), stack...)}},
			}
			if is32 {
				fc.loads[0].data = append(make([]byte, 16), words(true, 0x7008, 0x401200, 0, 0x401300)...)
			}
			c, err := core.New(bytes.NewReader(fc.bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Threads) != 2 || c.Threads[0].PID != 100 || c.Threads[1].PID != 101 || c.Threads[0].Signal != 11 {
				t.Fatalf("threads %+v", c.Threads)
			}
			th := c.Threads[0]
			want := unwind.Regs{IP: 0x401100, SP: 0x6ff0, FP: 0x7000, Compat: is32}
			if th.Regs != want || th.CS != 0x33 || th.SS != 0x2b {
				t.Errorf("thread 0: %+v", th)
			}
			if v, ok := c.Aux(core.AtEntry); !ok || v != 0x401000 {
				t.Errorf("AT_ENTRY %#x %v", v, ok)
			}
			if _, ok := c.Aux(12345); ok {
				t.Error("an absent aux entry was found")
			}
			cfg, _ := unwind.X86_64(11, 14)
			tr, err := cfg.Walk(c, th.Regs)
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.IPs(); len(got) != 3 || got[0] != 0x401100 || got[1] != 0x401200 || got[2] != 0x401300 {
				t.Errorf("walk %#x, stop %v", got, tr.Stop)
			}
			snap, err := c.Snapshot(th, 0)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Stack[0].Addr != 0x6ff0 || !bytes.Equal(snap.Stack[0].Data, fc.loads[0].data) || snap.Regs != th.Regs {
				t.Errorf("snapshot %+v", snap)
			}
			if small, _ := c.Snapshot(th, 8); len(small.Stack[0].Data) != 8 {
				t.Errorf("snapshot of at most 8 bytes holds %d", len(small.Stack[0].Data))
			}
			if _, _, err := c.VDSO(); err == nil {
				t.Error("VDSO found without AT_SYSINFO_EHDR")
			}
		})
	}
}

func TestCoreMemory(t *testing.T) {
	dir := t.TempDir()
	lib := make([]byte, 0x3000)
	for i := range lib {
		lib[i] = byte(i / 7)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib.so"), lib, 0o644); err != nil {
		t.Fatal(err)
	}
	maps := []unwind.Mapping{
		{Start: 0x10000, End: 0x12000, Offset: 0x1000, Path: "/lib.so"},
		{Start: 0x20000, End: 0x21000, Offset: 0, Path: "/missing.so"},
	}
	fc := fakeCore{
		notes: []fakeNote{prstatus(false, 1, 0, 0, 0, 0, 0x33, 0x2b), ntFile(false, 0x1000, maps)},
		loads: []fakeLoad{
			{vaddr: 0x1000, data: []byte{1, 2, 3, 4}},
			{vaddr: 0x1004, data: []byte{5, 6, 7, 8}},
			{vaddr: 0x10000, data: lib[0x1000:0x1010], memsz: 0x2000}, // the first bytes dumped, the rest not
			{vaddr: 0x20000, memsz: 0x1000},
			{vaddr: 0x30000, data: []byte{1, 2, 3, 4}, memsz: 0x1000},
		},
	}
	c, err := core.New(bytes.NewReader(fc.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	c.Root = dir
	if len(c.Mappings) != 2 || c.Mappings[0] != maps[0] || c.Mappings[1] != maps[1] {
		t.Fatalf("mappings %+v", c.Mappings)
	}
	if m, ok := c.MappingAt(0x10fff); !ok || m.Path != "/lib.so" {
		t.Errorf("MappingAt: %+v %v", m, ok)
	}
	read := func(addr uint64, n int) ([]byte, error) {
		p := make([]byte, n)
		err := c.ReadAt(p, addr)
		return p, err
	}
	tests := []struct {
		name string
		addr uint64
		n    int
		want []byte
		err  string
	}{
		{"across adjacent segments", 0x1002, 4, []byte{3, 4, 5, 6}, ""},
		{"from the core, then the mapped file", 0x1000c, 8, lib[0x100c:0x1014], ""},
		{"from the mapped file alone", 0x11ff0, 16, lib[0x2ff0:0x3000], ""},
		{"unmapped", 0x5000, 1, nil, "not mapped"},
		{"past a segment", 0x1006, 4, nil, "not mapped"},
		{"file missing", 0x20010, 4, nil, "cannot be read"},
		{"the last byte of the mapped file", 0x11fff, 1, lib[0x2fff:0x3000], ""},
		{"segment not dumped, no file", 0x30010, 4, nil, "were not dumped"},
	}
	for _, tc := range tests {
		got, err := read(tc.addr, tc.n)
		if tc.err != "" {
			var fe *unwind.FaultError
			if !errors.As(err, &fe) || fe.Addr != tc.addr || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, unwind.ErrFault) ||
				tc.err != "not mapped" && !errors.Is(err, core.ErrNotDumped) {
				t.Errorf("%s: error %v, want a fault at %#x saying %q", tc.name, err, tc.addr, tc.err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %x %v, want %x", tc.name, got, err, tc.want)
		}
	}
	if start, end, ok := c.SegmentAt(0x10005); !ok || start != 0x10000 || end != 0x12000 {
		t.Errorf("SegmentAt: %#x-%#x %v", start, end, ok)
	}
	// Under a root without the file, the bytes are not there.
	c2, err := core.New(bytes.NewReader(fc.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	c2.Root = filepath.Join(dir, "elsewhere")
	if err := c2.ReadAt(make([]byte, 4), 0x11000); !errors.Is(err, unwind.ErrFault) || !errors.Is(err, core.ErrNotDumped) {
		t.Errorf("read under a wrong root: %v", err)
	}
}

func TestCoreFormatErrors(t *testing.T) {
	good := prstatus(false, 1, 0, 0, 0, 0, 0, 0)
	tests := []struct {
		name string
		data []byte
		off  int64 // the FormatError's offset, -1 if not a FormatError
		msg  string
	}{
		{"not an ELF file", []byte("root:x:0:0:root:/root:/bin/bash\n"), 0, "not an ELF file: give a core dump"},
		{"not a core", fakeCore{typ: 2, notes: []fakeNote{good}}.bytes(), 16, "not a core file"},
		{"machine", fakeCore{machine: 183, notes: []fakeNote{good}}.bytes(), 18, "unsupported machine"},
		{"no threads", fakeCore{notes: []fakeNote{auxv(false)}}.bytes(), 0, "no NT_PRSTATUS"},
		{"short prstatus", fakeCore{notes: []fakeNote{{"CORE", 1, make([]byte, 100)}}}.bytes(), 64 + 56 + 20, "NT_PRSTATUS too short"},
		{"auxv size", fakeCore{notes: []fakeNote{good, {"CORE", 6, make([]byte, 12)}}}.bytes(), 64 + 56 + 20 + 336 + 20, "NT_AUXV"},
		{"NT_FILE count", fakeCore{notes: []fakeNote{good, {"CORE", 0x46494c45, words(false, 1000, 4096)}}}.bytes(), 64 + 56 + 20 + 336 + 20, "count too large"},
		{"NT_FILE path", fakeCore{notes: []fakeNote{good, {"CORE", 0x46494c45, append(words(false, 1, 4096, 0, 1, 0), "AB"...)}}}.bytes(), 64 + 56 + 20 + 336 + 20 + 40, "not NUL-terminated"},
		{"filesz above memsz", fakeCore{notes: []fakeNote{good}, loads: []fakeLoad{{vaddr: 0x1000, data: make([]byte, 16), memsz: 8}}}.bytes(), 64 + 56, "file size above memory size"},
	}
	// A note whose size runs past the segment.
	bad := fakeCore{notes: []fakeNote{good}}.bytes()
	le.PutUint32(bad[64+56+4:], 1<<20)
	tests = append(tests, struct {
		name string
		data []byte
		off  int64
		msg  string
	}{"note past segment", bad, 64 + 56, "runs past"})
	for _, tc := range tests {
		_, err := core.New(bytes.NewReader(tc.data))
		var fe *core.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a *FormatError", tc.name, err)
			continue
		}
		if fe.Off != tc.off || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %q at %#x, want %q at %#x", tc.name, err, fe.Off, tc.msg, tc.off)
		}
	}
	if _, err := core.New(bytes.NewReader([]byte("not an ELF file at all........................................................."))); err == nil {
		t.Error("garbage accepted")
	}
	if _, err := core.Open(filepath.Join(t.TempDir(), "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
	// A core cut short, read through a reader that cannot tell its size:
	// the bytes that are not there are a fault naming the truncation.
	cut := fakeCore{notes: []fakeNote{good}, loads: []fakeLoad{{vaddr: 0x1000, data: make([]byte, 64)}}}.bytes()
	c, err := core.New(sizeless{bytes.NewReader(cut[:len(cut)-32])})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ReadAt(make([]byte, 8), 0x1030); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("read past the end of a cut core: %v", err)
	}
}

// sizeless hides the Size method of a reader.
type sizeless struct{ r *bytes.Reader }

func (s sizeless) ReadAt(p []byte, off int64) (int, error) { return s.r.ReadAt(p, off) }

// A core cut short is refused when it is opened, naming the part that is
// cut and where: the segment by program header index, type and address.
func TestCoreTruncated(t *testing.T) {
	for _, is32 := range []bool{false, true} {
		eh, ph := int64(64), int64(56)
		if is32 {
			eh, ph = 52, 32
		}
		fc := fakeCore{is32: is32,
			notes: []fakeNote{prstatus(is32, 1, 0, 0, 0, 0, 0x33, 0x2b)},
			loads: []fakeLoad{
				{vaddr: 0x1000, data: make([]byte, 0x100)},
				{vaddr: 0x5000, data: nil, memsz: 0x1000}, // no file bytes: never cut
				{vaddr: 0x9000, data: make([]byte, 0x200)},
			},
		}
		full := fc.bytes()
		size := int64(len(full))
		notes := eh + 4*ph // where the notes start
		notesEnd := size - 0x300
		// The same core with a section header table of 3 entries at its end.
		withSH := append(append([]byte(nil), full...), make([]byte, 3*64)...)
		if is32 {
			withSH = append(append([]byte(nil), full...), make([]byte, 3*40)...)
			le.PutUint32(withSH[32:], uint32(size))
			le.PutUint16(withSH[46:], 40)
			le.PutUint16(withSH[48:], 3)
		} else {
			le.PutUint64(withSH[40:], uint64(size))
			le.PutUint16(withSH[58:], 64)
			le.PutUint16(withSH[60:], 3)
		}
		tests := []struct {
			name string
			data []byte
			want core.TruncatedError
			msg  string
		}{
			{"in the identity", full[:10], core.TruncatedError{Part: "the ELF header", End: 16, Size: 10}, "the ELF header needs file bytes 0x0-0x10, but the file has 0xa (10 bytes)"},
			{"in the ELF header", full[:eh-4], core.TruncatedError{Part: "the ELF header", End: eh, Size: eh - 4}, "the ELF header"},
			{"in the program headers", full[:eh+ph+3], core.TruncatedError{Part: "the program header table", Off: eh, End: eh + 4*ph, Size: eh + ph + 3}, "the program header table"},
			{"in the notes", full[:notes+8], core.TruncatedError{Part: "segment", Index: 0, Type: elf.PT_NOTE, Off: notes, End: notesEnd, Size: notes + 8, Later: 2}, "segment 0 (PT_NOTE) needs"},
			{"in the first load", full[:notesEnd+0x80], core.TruncatedError{Part: "segment", Index: 1, Type: elf.PT_LOAD, Vaddr: 0x1000, Off: notesEnd, End: notesEnd + 0x100, Size: notesEnd + 0x80, Later: 1}, "segment 1 (PT_LOAD at vaddr 0x1000) needs"},
			{"in the last load", full[:size-1], core.TruncatedError{Part: "segment", Index: 3, Type: elf.PT_LOAD, Vaddr: 0x9000, Off: size - 0x200, End: size, Size: size - 1}, "segment 3 (PT_LOAD at vaddr 0x9000)"},
			{"in the section headers", withSH[:len(withSH)-5], core.TruncatedError{Part: "the section header table", Off: size, End: int64(len(withSH)), Size: int64(len(withSH)) - 5}, "the section header table"},
		}
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%v/%s", map[bool]string{false: "64", true: "32"}[is32], tc.name), func(t *testing.T) {
				_, err := core.New(bytes.NewReader(tc.data))
				var te *core.TruncatedError
				if !errors.As(err, &te) {
					t.Fatalf("%v, want a *TruncatedError", err)
				}
				if *te != tc.want {
					t.Errorf("%+v\nwant %+v", *te, tc.want)
				}
				msg := err.Error()
				if !strings.Contains(msg, tc.msg) || !strings.HasPrefix(msg, "core truncated: ") || !strings.HasSuffix(msg, "dump the process again") || strings.Contains(msg, "\n") {
					t.Errorf("message %q, want one line saying %q", msg, tc.msg)
				}
				if tc.want.Later > 0 && !strings.Contains(msg, fmt.Sprintf("and %d later segments are cut off too", tc.want.Later)) {
					t.Errorf("message %q does not count the later segments", msg)
				}
			})
		}
		// The whole file, and the one with its section headers, open.
		for _, data := range [][]byte{full, withSH} {
			if _, err := core.New(bytes.NewReader(data)); err != nil {
				t.Errorf("complete core: %v", err)
			}
		}
	}
}
