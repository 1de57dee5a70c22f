package unwind

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseConsoleLog(t *testing.T) {
	f, err := os.Open("testdata/snapshots/console.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	snaps, err := ParseSnapshots(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		tag    string
		regs   Regs
		stack  []uint64 // segment addresses
		bytes  int
		kernel []uint64
		maps   []Mapping
		fields map[string]string
	}{
		{
			tag:    "fp64",
			regs:   Regs{IP: 0x401136, SP: 0x7ffc0000, FP: 0x7ffc0010},
			stack:  []uint64{0x7ffc0000},
			bytes:  64,
			kernel: []uint64{0x401136, 0x401150, 0x401170},
			maps:   []Mapping{{Start: 0x400000, End: 0x402000, Offset: 0, Path: "/usr/bin/frames test"}},
			fields: map[string]string{"tag": "fp64", "pid": "93"},
		},
		{
			tag:    "compat-bases",
			regs:   Regs{IP: 0x100, SP: 0xff00, FP: 0xff08, Compat: true, CSBase: 0x1000, SSBase: 0x10000},
			stack:  []uint64{0x1ff00},
			bytes:  32,
			kernel: []uint64{0x1100, 0x804a100, 0x804a200},
			fields: map[string]string{"tag": "compat-bases"},
		},
		{
			tag:    "nokernel",
			regs:   Regs{IP: 0x8049000, SP: 0xffffd000, FP: 0xffffd000, Compat: true},
			stack:  []uint64{0xffffd000},
			bytes:  8,
			fields: map[string]string{"tag": "nokernel"},
		},
	}
	if len(snaps) != len(want) {
		t.Fatalf("%d snapshots, want %d", len(snaps), len(want))
	}
	for i, w := range want {
		s := snaps[i]
		if s.Regs != w.regs {
			t.Errorf("%s: regs %+v, want %+v", w.tag, s.Regs, w.regs)
		}
		var addrs []uint64
		n := 0
		for _, seg := range s.Stack {
			addrs = append(addrs, seg.Addr)
			n += len(seg.Data)
		}
		if !reflect.DeepEqual(addrs, w.stack) || n != w.bytes {
			t.Errorf("%s: stack segments %#x, %d bytes; want %#x, %d", w.tag, addrs, n, w.stack, w.bytes)
		}
		if !reflect.DeepEqual(s.Kernel, w.kernel) {
			t.Errorf("%s: kernel %#x, want %#x", w.tag, s.Kernel, w.kernel)
		}
		if !reflect.DeepEqual(s.Maps, w.maps) || !reflect.DeepEqual(s.Fields, w.fields) {
			t.Errorf("%s: maps %+v fields %v", w.tag, s.Maps, s.Fields)
		}
		// The kernel traces in the log are what the walker finds.
		if s.Kernel != nil {
			tr, err := mustX86(t, 14).Walk(s.Memory(), s.Regs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tr.IPs(), s.Kernel) {
				t.Errorf("%s: walker %#x, kernel %#x", w.tag, tr.IPs(), s.Kernel)
			}
		}
	}
	// ParseSnapshot returns the first.
	f.Seek(0, 0)
	first, err := ParseSnapshot(f)
	if err != nil || first.Fields["tag"] != "fp64" {
		t.Errorf("ParseSnapshot: %v %v", first, err)
	}
}

func TestSnapshotErrors(t *testing.T) {
	const head = "snapshot: v=1 mode=64 ip=0x1 sp=0x1000 bp=0x1000 cs_base=0 ss_base=0\n"
	tests := []struct {
		name, in string
		line     int
		msg      string
	}{
		{"version", "snapshot: v=2 mode=64 ip=1 sp=1 bp=1\n", 1, "version"},
		{"mode", "snapshot: v=1 mode=16 ip=1 sp=1 bp=1\n", 1, "mode"},
		{"missing sp", "snapshot: v=1 mode=64 ip=1 bp=1\n", 1, "no sp="},
		{"missing bp", "snapshot: v=1 mode=64 ip=1 sp=1\n", 1, "no bp="},
		{"bp and fp", "snapshot: v=1 mode=64 ip=1 sp=1 bp=1 fp=1\n", 1, "both"},
		{"bad number", "snapshot: v=1 mode=64 ip=0xg sp=1 bp=1\n", 1, "ip:"},
		{"duplicate", "snapshot: v=1 mode=64 ip=1 ip=2 sp=1 bp=1\n", 1, "twice"},
		{"not key=value", "snapshot: v=1 mode=64 ip=1 sp=1 bp=1 junk\n", 1, "key=value"},
		{"odd hex", head + "noise\nstack: 0x1000 abc\n", 3, "stack bytes"},
		{"stack without bytes", head + "stack: 0x1000\n", 2, "address and bytes"},
		{"overlap", head + "stack: 0x1000 00112233\nstack: 0x2000 00\nstack: 0x1002 aabb\n", 4, "overlap"},
		{"wrap", head + "stack: 0xffffffffffffffff 0011\n", 2, "wrap"},
		{"kernel entry", head + "kernel: 0x1 zz\n", 2, "kernel entry"},
		{"map fields", head + "map: 0x1000 0x2000 0x0\n", 2, "map line"},
		{"map order", head + "map: 0x2000 0x1000 0x0 /bin/x\n", 2, "not above"},
		{"lost stack line", head + "stack: 0x1000 00112233\nend: stack=8\n", 3, "lines lost"},
		{"lost kernel line", head + "kernel: 0x1\nend: kernel=2\n", 3, "lines lost"},
		{"end field", head + "end: stacks=1\n", 2, "end field"},
		{"uprobe not hex", "snapshot: v=1 mode=64 ip=1 sp=1 bp=1 uprobe=5g\n", 1, "uprobe:"},
		{"uprobe empty", "snapshot: v=1 mode=64 ip=1 sp=1 bp=1 uprobe=\n", 1, "want 1 to 16 bytes"},
		{"uprobe too long", "snapshot: v=1 mode=64 ip=1 sp=1 bp=1 uprobe=" + strings.Repeat("90", 17) + "\n", 1, "17 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSnapshots(strings.NewReader(tc.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *SyntaxError", err)
			}
			if se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error %q at line %d, want line %d saying %q", se.Msg, se.Line, tc.line, tc.msg)
			}
			if !strings.Contains(err.Error(), "line ") {
				t.Errorf("error %q does not give the line", err)
			}
		})
	}
	// A uprobe's instruction may be given with fewer or more bytes than
	// the 4 the start-of-function rule reads.
	for in, want := range map[string][4]byte{"55": {0x55}, "f30f1efa4889e5c3": {0xf3, 0x0f, 0x1e, 0xfa}} {
		s, err := ParseSnapshot(strings.NewReader("snapshot: v=1 mode=64 ip=1 sp=1 bp=1 uprobe=" + in + "\n"))
		if err != nil || !s.Regs.Uprobe || s.Regs.UprobeInsn != want || s.Fields["uprobe"] != "" {
			t.Errorf("uprobe=%s: %+v, %v", in, s, err)
		}
	}
	if _, err := ParseSnapshot(strings.NewReader("no snapshot here\nstack: 0x1 00\n")); !errors.Is(err, ErrNoSnapshot) {
		t.Errorf("input without a snapshot: %v", err)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := range 200 {
		s := &Snapshot{Regs: Regs{IP: rng.Uint64(), SP: rng.Uint64() >> 1, FP: rng.Uint64(), Compat: i%2 == 1, CSBase: uint64(rng.Intn(3)) << 12, SSBase: uint64(rng.Intn(3)) << 16}}
		addr := s.Regs.SP
		for range rng.Intn(4) {
			data := make([]byte, 1+rng.Intn(300))
			rng.Read(data)
			s.Stack = append(s.Stack, Segment{Addr: addr, Data: data})
			addr += uint64(len(data)) + 1 + uint64(rng.Intn(100)) // leave holes: segments stay apart
		}
		if s.Stack == nil {
			s.Stack = Segments{}
		}
		if i%3 != 0 {
			s.Kernel = make([]uint64, rng.Intn(20))
			for j := range s.Kernel {
				s.Kernel[j] = rng.Uint64()
			}
		}
		if i%5 == 0 {
			s.Regs.Uprobe = true
			rng.Read(s.Regs.UprobeInsn[:])
		}
		if i%4 == 0 {
			s.Maps = []Mapping{{Start: 0x400000, End: 0x401000, Offset: 0x2000, Path: "/lib/with space.so"}}
			s.Fields = map[string]string{"tag": "t" + string(rune('a'+i%26)), "comm": "frames"}
		}
		var buf bytes.Buffer
		if _, err := s.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(buf.String(), "\n") {
			if len(line) > 160 && !strings.HasPrefix(line, "map:") {
				t.Fatalf("snapshot %d line %d is %d characters", i, n+1, len(line))
			}
		}
		got, err := ParseSnapshot(&buf)
		if err != nil {
			t.Fatalf("snapshot %d: %v\n%s", i, err, buf.String())
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("snapshot %d: round trip\n got %+v\nwant %+v", i, got, s)
		}
	}
}

// The deep stack fixture is in the writer's canonical form.
func TestSnapshotCanonical(t *testing.T) {
	data, err := os.ReadFile("testdata/deep64.snap")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSnapshot(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Error("writing the parsed deep64.snap does not reproduce it")
	}
	tr, err := mustX86(t, 14).Walk(s.Memory(), s.Regs)
	if err != nil {
		t.Fatal(err)
	}
	// 600 recursive calls: the limit cuts the walk, and every entry
	// after the first two is the same return address in rec().
	if len(tr.Entries) != 511 || tr.Stop != StopMaxEntries {
		t.Fatalf("%d entries, stop %v", len(tr.Entries), tr.Stop)
	}
	for i := 2; i < 511; i++ {
		if tr.Entries[i].IP != tr.Entries[2].IP || tr.Entries[i].SP <= tr.Entries[i-1].SP {
			t.Fatalf("entry %d: %+v after %+v", i, tr.Entries[i], tr.Entries[i-1])
		}
	}
}

func TestSnapshotWriteRejects(t *testing.T) {
	for _, s := range []*Snapshot{
		{Fields: map[string]string{"ip": "1"}},
		{Fields: map[string]string{"Tag": "x"}},
		{Fields: map[string]string{"tag": "a b"}},
		{Maps: []Mapping{{Start: 1, End: 2, Path: "a\nb"}}},
	} {
		if _, err := s.WriteTo(&bytes.Buffer{}); err == nil {
			t.Errorf("%+v written", s)
		}
	}
}

// The example in the package documentation parses, and its kernel trace is
// the walker's.
func TestDocExample(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(l, "//\t"); ok && regexp.MustCompile(`^(snapshot|map|stack|kernel|end): `).MatchString(rest) {
			lines = append(lines, rest)
		}
	}
	s, err := ParseSnapshot(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := mustX86(t, 14).Walk(s.Memory(), s.Regs)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 6 || !reflect.DeepEqual(tr.IPs(), s.Kernel) {
		t.Errorf("%d example lines; walker %#x, kernel line %#x", len(lines), tr.IPs(), s.Kernel)
	}
}
