package symtab

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/unwind"
)

// buildChain compiles testdata/chain.c with extra flags.
func buildChain(t *testing.T, flags ...string) (string, *elf.File) {
	t.Helper()
	testenv.Tool(t, "gcc", "gcc")
	out := filepath.Join(t.TempDir(), "chain")
	args := append([]string{"-O0", "-fno-omit-frame-pointer", "-o", out, "../testdata/chain.c"}, flags...)
	if msg, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return out, f
}

func funcSym(t *testing.T, f *elf.File, name string) elf.Symbol {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s
		}
	}
	t.Fatalf("no function %s", name)
	return elf.Symbol{}
}

// mappingsAt lays f's PT_LOAD segments out at base as the kernel maps them.
func mappingsAt(f *elf.File, base uint64, path string) []unwind.Mapping {
	var maps []unwind.Mapping
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			start := base + p.Vaddr&^0xfff
			maps = append(maps, unwind.Mapping{Start: start, End: base + p.Vaddr + p.Memsz, Offset: p.Off &^ 0xfff, Path: path})
		}
	}
	return maps
}

func TestLocatePIE(t *testing.T) {
	path, f := buildChain(t, "-fPIE", "-pie")
	const base = 0x555555554000
	maps := mappingsAt(f, base, path)
	var tab Table
	tab.AddMappings(maps)
	if errs := tab.AddMapped(maps, "", nil); len(errs) != 0 {
		t.Fatal(errs)
	}
	rec := funcSym(t, f, "rec")
	pc := base + rec.Value
	for _, tc := range []struct {
		pc     uint64
		caller bool
		fn     string
		off    uint64
	}{
		{pc, false, "rec", 0},
		{pc + 3, false, "rec", 3},
		{pc + 3, true, "rec", 3}, // a return address inside: pc-1 is too
		{pc + 1, true, "rec", 1}, // pc-1 is the first byte
		{pc, true, "leaf", rec.Value - funcSym(t, f, "leaf").Value}, // pc-1 is in the function before
		{pc + rec.Size - 1, false, "rec", rec.Size - 1},
	} {
		loc := tab.Locate(tc.pc, tc.caller)
		if loc.Func != tc.fn || loc.Offset != tc.off || loc.Object != path {
			t.Errorf("Locate(%#x, %v) = %s, want %s+%#x (%s)", tc.pc, tc.caller, loc, tc.fn, tc.off, path)
		}
	}
	if loc := tab.Locate(0x10, false); loc != (Location{}) {
		t.Errorf("an address in nothing: %+v", loc)
	}
	// The mappings at offset 0 and of the text give the bias.
	for _, m := range maps[:2] {
		bias, ok := Bias(f, m.Start, m.Offset)
		if !ok || bias != base {
			t.Errorf("Bias(%#x, %#x) = %#x %v, want %#x", m.Start, m.Offset, bias, ok, uint64(base))
		}
	}
	// Listed last first, the mappings still place the file right.
	var backwards Table
	backwards.AddMapped([]unwind.Mapping{maps[len(maps)-1], maps[1], maps[0]}, "", nil)
	if loc := backwards.Locate(pc+2, false); loc.Func != "rec" || loc.Offset != 2 {
		t.Errorf("mappings listed backwards: %s", loc)
	}
	if _, ok := Bias(f, base, 0x123); ok {
		t.Error("Bias found a segment at an offset no segment has")
	}
	var direct Table
	if err := direct.AddFile(path, base); err != nil {
		t.Fatal(err)
	}
	if loc := direct.Locate(pc+5, false); loc.Func != "rec" || loc.Offset != 5 || loc.Object != path {
		t.Errorf("AddFile: %s", loc)
	}
}

// A return address at the first byte of a sigreturn trampoline is where a
// signal handler returns to, not the byte after a call.
func TestLocateRestorer(t *testing.T) {
	path, f := buildChain(t, "-static")
	var tab Table
	if err := tab.AddFile(path, 0); err != nil {
		t.Fatal(err)
	}
	rt := funcSym(t, f, "__restore_rt")
	if loc := tab.Locate(rt.Value, true); loc.Func != "__restore_rt" || loc.Offset != 0 {
		t.Errorf("return to __restore_rt: %s", loc)
	}
	main := funcSym(t, f, "main")
	if loc := tab.Locate(main.Value, true); loc.Func == "main" {
		t.Errorf("return address at main's first byte resolved to main: %s", loc)
	}
}

func TestLocationString(t *testing.T) {
	for _, tc := range []struct {
		loc  Location
		want string
	}{
		{Location{Func: "main", Offset: 0x1a, Object: "/bin/x"}, "main+0x1a (/bin/x)"},
		{Location{Object: "/bin/x"}, "?? (/bin/x)"},
		{Location{}, "??"},
	} {
		if got := tc.loc.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.loc, got, tc.want)
		}
	}
}

func TestAddFileErrors(t *testing.T) {
	var tab Table
	if err := tab.AddFile("/nonexistent/file", 0); err == nil {
		t.Error("missing file added")
	}
	errs := tab.AddMapped([]unwind.Mapping{{Start: 0x1000, End: 0x2000, Path: "/nonexistent/lib.so"}, {Start: 0x2000, End: 0x3000, Path: "/nonexistent/lib.so"}}, "", nil)
	if len(errs) != 1 {
		t.Errorf("AddMapped of a missing file twice: %v", errs)
	}
}

// TestAddNM reads a symbol table as nm -S prints it (the form the self-test
// keeps beside a saved console log) and locates addresses in it.
func TestAddNM(t *testing.T) {
	var tab Table
	err := tab.AddNM("prog", strings.NewReader(
		"0000000000401000 0000000000000010 T f\n"+
			"0000000000401010 0000000000000020 T g\n"+
			"\n"+
			"0000000000401100 0000000000000000 T _fini\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr   uint64
		caller bool
		want   string
	}{
		{0x401000, false, "f+0x0 (prog)"}, {0x40100f, false, "f+0xf (prog)"}, {0x401010, false, "g+0x0 (prog)"},
		{0x40102f, false, "g+0x1f (prog)"}, {0x401030, false, "?? (prog)"}, {0x401100, false, "_fini+0x0 (prog)"},
		{0x7ffd0000, false, "??"}, {0x400fff, false, "??"},
		// A return address is looked up inside the call before it.
		{0x401010, true, "f+0x10 (prog)"},
	}
	for _, tc := range tests {
		if got := tab.Locate(tc.addr, tc.caller).String(); got != tc.want {
			t.Errorf("Locate(%#x, %v) = %s, want %s", tc.addr, tc.caller, got, tc.want)
		}
	}
	for _, bad := range []string{"", "401000 10 T\n", "zz 10 T f\n", "401000 1g T f\n"} {
		if err := new(Table).AddNM("bad", strings.NewReader(bad)); err == nil {
			t.Errorf("AddNM(%q) took it", bad)
		}
	}
}
