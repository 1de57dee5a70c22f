package unwind

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// The differential test: the series' own kernel/unwind/user.c, rebuilt
// from the seed at a revision and compiled for user space with the shims
// in testdata/kernelc, must produce the same traces as the Go walker with
// the Config that models that revision, on generated stacks and on the
// captured deep stack.

type kernelVariant struct {
	name     string
	rev      int
	m32      bool     // build the harness with -m32: sizeof(long) = 4
	testarch bool     // revisions 2-11: enable the generic code with testdata/kernelc/testarch
	defines  []string // CONFIG_ options and TESTARCH_COMPAT
	config   func() Config
	// files, if set, gives the tree's files instead of the seed at rev,
	// with x86's headers (Linux 6.19's, kernelc619_test.go), and extra
	// writes more C files of the harness into a directory.
	files func(t *testing.T) map[string][]byte
	extra func(t *testing.T, dir string) []string
	// uprobes makes some vectors walks made in a uprobe handler.
	uprobes bool
}

func fixedConfig(c Config) func() Config { return func() Config { return c } }

func x86Config(t testing.TB, rev int) func() Config {
	return func() Config {
		c, err := X86_64(11, rev)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

func kernelVariants(t testing.TB) []kernelVariant {
	fp64, fp32, compat := X86Frame(8), X86Frame(4), X86Frame(4)
	x86fp := []string{"CONFIG_UNWIND_USER", "CONFIG_HAVE_UNWIND_USER_FP", "CONFIG_X86_64"}
	return append([]kernelVariant{
		{name: "patch01-stub", rev: 1, config: fixedConfig(Config{LongSize: 8, NextStub: true})},
		{name: "patch02-testarch-fp", rev: 2, testarch: true, defines: []string{"CONFIG_HAVE_UNWIND_USER_FP"},
			config: fixedConfig(Config{LongSize: 8, FP: &fp64})},
		{name: "patch02-testarch-fp-m32", rev: 2, m32: true, testarch: true, defines: []string{"CONFIG_HAVE_UNWIND_USER_FP"},
			config: fixedConfig(Config{LongSize: 4, FP: &fp32})},
		{name: "patch03-testarch-compat", rev: 3, testarch: true,
			defines: []string{"CONFIG_HAVE_UNWIND_USER_FP", "CONFIG_HAVE_UNWIND_USER_COMPAT_FP", "TESTARCH_COMPAT"},
			config:  fixedConfig(Config{LongSize: 8, FP: &fp64, CompatFP: &compat})},
		{name: "patch11-testarch-compat", rev: 11, testarch: true,
			defines: []string{"CONFIG_HAVE_UNWIND_USER_FP", "CONFIG_HAVE_UNWIND_USER_COMPAT_FP", "TESTARCH_COMPAT"},
			config:  fixedConfig(Config{LongSize: 8, FP: &fp64, CompatFP: &compat})},
		{name: "patch14-testarch-sp-frame", rev: 14, testarch: true, defines: []string{"CONFIG_HAVE_UNWIND_USER_FP", "TESTARCH_SP_FRAME"},
			config: fixedConfig(Config{LongSize: 8, FP: &Frame{CFAOff: 24, RAOff: -8, UseFP: false}})},
		{name: "patch12-x86_64", rev: 12, defines: x86fp, config: x86Config(t, 12)},
		{name: "patch13-x86_64", rev: 13, defines: x86fp, config: x86Config(t, 13)},
		{name: "patch14-x86_64", rev: 14,
			defines: append([]string{"CONFIG_HAVE_UNWIND_USER_COMPAT_FP", "CONFIG_IA32_EMULATION"}, x86fp...),
			config:  x86Config(t, 14)},
		{name: "patch14-x86_64-no-ia32", rev: 14, defines: x86fp,
			config: fixedConfig(Config{LongSize: 8, FP: &fp64, MaxEntries: 511, UserMax: TaskSizeMaxX86_64})},
	}, kernelVariants619(t)...)
}

// needGCC skips the test unless gcc is there and, for an -m32 variant, it
// builds 32-bit programs that this host also runs.
func needGCC(t testing.TB, m32 bool) {
	t.Helper()
	testenv.Tool(t, "gcc", "gcc")
	if m32 {
		testenv.Run32(t)
	}
}

// buildHarness writes the series' files at v.rev into a tree and builds
// testdata/kernelc/harness.c with its user.c.
func buildHarness(t *testing.T, v kernelVariant) string {
	t.Helper()
	needGCC(t, v.m32)
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	files := v.files
	if files == nil {
		files = func(t *testing.T) map[string][]byte { return seedFiles(t, v.rev) }
	}
	for name, data := range files(t) {
		p := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kc, err := filepath.Abs("testdata/kernelc")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-std=gnu11", "-O1", "-Wall", "-Wno-unused-function", "-Wno-maybe-uninitialized", "-o", filepath.Join(dir, "harness")}
	if v.m32 {
		args = append(args, "-m32")
	}
	for _, d := range v.defines {
		args = append(args, "-D"+d+"=1")
	}
	args = append(args, "-I", filepath.Join(tree, "include"))
	if v.testarch {
		args = append(args, "-I", filepath.Join(kc, "testarch"))
	} else if v.rev >= 12 || v.files != nil {
		args = append(args, "-I", filepath.Join(tree, "arch/x86/include"))
	}
	args = append(args, "-I", filepath.Join(kc, "generic"), "-I", filepath.Join(kc, "shim"),
		filepath.Join(kc, "harness.c"), filepath.Join(tree, "kernel/unwind/user.c"))
	if v.extra != nil {
		args = append(args, v.extra(t, dir)...)
	}
	out, err := exec.Command("gcc", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("building the harness for %s: %v\n%s", v.name, err, out)
	}
	return filepath.Join(dir, "harness")
}

// vector is one walk: registers, memory, limits.
type vector struct {
	regs    Regs
	max     int
	userMax uint64
	mem     Segments
}

func (v vector) write(w *bufio.Writer) {
	compat := 0
	if v.regs.Compat {
		compat = 1
	}
	fmt.Fprintf(w, "regs %x %x %x %x %x %x %x %x\n", v.regs.IP, v.regs.SP, v.regs.FP, compat, v.regs.CSBase, v.regs.SSBase, v.max, v.userMax)
	if v.regs.Uprobe {
		fmt.Fprintf(w, "uprobe %s\n", hex.EncodeToString(v.regs.UprobeInsn[:]))
	}
	for _, s := range v.mem {
		fmt.Fprintf(w, "mem %x %s\n", s.Addr, hex.EncodeToString(s.Data))
	}
	fmt.Fprintln(w, "go")
}

// runHarness runs vectors through the harness and returns each trace.
func runHarness(t *testing.T, bin string, vecs []vector) [][]uint64 {
	t.Helper()
	var in bytes.Buffer
	w := bufio.NewWriter(&in)
	for _, v := range vecs {
		v.write(w)
	}
	w.Flush()
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	var traces [][]uint64
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "trace" {
			t.Fatalf("harness printed %q", line)
		}
		if f[1] != "0" {
			t.Fatalf("unwind_user returned %s", f[1])
		}
		n, _ := strconv.Atoi(f[2])
		if len(f) != 3+n {
			t.Fatalf("harness line %q: want %d entries", line, n)
		}
		tr := make([]uint64, n)
		for i := range tr {
			tr[i], err = strconv.ParseUint(f[3+i], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
		}
		traces = append(traces, tr)
	}
	if len(traces) != len(vecs) {
		t.Fatalf("harness returned %d traces for %d vectors", len(traces), len(vecs))
	}
	return traces
}

// genVector makes a stack with a frame-pointer chain in it, with the
// chain's links and the registers randomly broken in the ways the stop
// rules are about, or, one time in eight, random registers over random
// memory.
func genVector(rng *rand.Rand, longSize int, userMax uint64) vector {
	mask := ^uint64(0)
	if longSize == 4 {
		mask = 0xffffffff
	}
	v := vector{max: 1 + rng.Intn(24), userMax: userMax}
	if rng.Intn(4) == 0 {
		v.max = 511
	}
	v.regs.Compat = rng.Intn(3) == 0
	w := uint64(longSize)
	if v.regs.Compat {
		w = 4
	}
	size := uint64(64 + rng.Intn(1024))
	bases := []uint64{0x7ffc_1234_5000, 0x1000, 0xffff_e000, 0x7fff_ffff_efc0, 0xffff_ffff_ffff_fe00, uint64(rng.Int63())}
	if longSize == 4 || v.regs.Compat {
		bases = []uint64{0xffff_d000, 0x1000, 0x0804_8000, 0xffff_ff00, uint64(rng.Uint32())}
	}
	base := bases[rng.Intn(len(bases))] & mask
	if end := base + size; end < base || end-1 > mask {
		size = mask - base + 1
	}
	data := make([]byte, size)
	rng.Read(data)
	if rng.Intn(8) == 0 {
		v.regs.IP, v.regs.SP, v.regs.FP = rng.Uint64()&mask, (base+uint64(rng.Intn(int(size))))&mask, (base+uint64(rng.Intn(int(size))))&mask
		if rng.Intn(2) == 0 {
			v.regs.FP = rng.Uint64() & mask
		}
		v.mem = Segments{{Addr: base, Data: data}}
		return v
	}
	if v.regs.Compat && rng.Intn(2) == 0 {
		v.regs.CSBase = uint64(rng.Intn(3)) * 0x1000_0000
		v.regs.SSBase = []uint64{0, 0x100, 0x1_0000_0000, uint64(rng.Uint32())}[rng.Intn(4)]
	}
	put := func(addr, val uint64) {
		off := addr - base
		if addr < base || off+w > size {
			return
		}
		if w == 4 {
			binary.LittleEndian.PutUint32(data[off:], uint32(val))
		} else {
			binary.LittleEndian.PutUint64(data[off:], val)
		}
	}
	// The chain, in absolute addresses; registers and saved frame
	// pointers hold them minus the stack segment base.
	fp := base + uint64(rng.Intn(32))
	sp := fp - uint64(rng.Intn(16))
	if rng.Intn(6) == 0 {
		sp = fp + uint64(rng.Intn(64)) // sp above fp: wrong direction at once
	}
	v.regs.SP = (sp - v.regs.SSBase) & mask
	v.regs.FP = (fp - v.regs.SSBase) & mask
	v.regs.IP = (0x401000 + uint64(rng.Intn(0x1000))) & mask
	for range 1 + rng.Intn(40) {
		next := fp + 2*w + uint64(rng.Intn(48))
		switch rng.Intn(24) {
		case 0:
			next = fp - uint64(rng.Intn(64)) // wrong direction
		case 1:
			next = 0
		case 2:
			next = base + size + uint64(rng.Intn(64)) // fault
		case 3:
			next = mask - uint64(rng.Intn(16)) // cfa wraps
		case 4:
			next = base + size - uint64(rng.Intn(int(2*w))) // straddles the end
		case 5:
			next = fp // cfa = fp + 2w > sp still: a loop that moves sp up
		}
		put(fp+w, 0x401000+uint64(rng.Intn(0x1000))) // return address
		put(fp, next-v.regs.SSBase)                  // saved frame pointer
		if next <= fp {
			break
		}
		fp = next
	}
	v.mem = Segments{{Addr: base, Data: data}}
	if rng.Intn(4) == 0 {
		// A second region: code, or the rest of the stack after a hole.
		extra := make([]byte, 256)
		rng.Read(extra)
		addr := (base + size + 64) & mask
		if addr > base && addr+256 > addr {
			v.mem = append(v.mem, Segment{Addr: addr, Data: extra})
		}
	}
	return v
}

func TestKernelDifferential(t *testing.T) {
	deep, err := os.ReadFile("testdata/deep64.snap")
	if err != nil {
		t.Fatal(err)
	}
	deepSnap, err := ParseSnapshot(bytes.NewReader(deep))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range kernelVariants(t) {
		t.Run(kv.name, func(t *testing.T) {
			bin := buildHarness(t, kv)
			base := kv.config()
			long := base.LongSize
			rng := rand.New(rand.NewSource(int64(kv.rev)*1000 + int64(long)))
			var vecs []vector
			for i := range 3000 {
				um := base.UserMax
				if i%5 == 0 {
					um = 0
				}
				v := genVector(rng, long, um)
				if kv.uprobes && rng.Intn(2) == 0 {
					v.regs.Uprobe = true
					v.regs.UprobeInsn = uprobeInsns[rng.Intn(len(uprobeInsns))]
				}
				vecs = append(vecs, v)
			}
			if long == 8 {
				vecs = append(vecs, vector{regs: deepSnap.Regs, mem: deepSnap.Stack, max: 511, userMax: base.UserMax})
			}
			got := runHarness(t, bin, vecs)
			stops := map[Stop]int{}
			for i, v := range vecs {
				cfg := base
				cfg.MaxEntries, cfg.UserMax = v.max, v.userMax
				tr, err := cfg.Walk(v.mem, v.regs)
				if err != nil {
					t.Fatal(err)
				}
				stops[tr.Stop]++
				if want := tr.IPs(); !equalU64(got[i], want) {
					t.Errorf("vector %d (regs %+v, max %d, user max %#x):\nkernel %x\nwalker %x (stop %v)", i, v.regs, v.max, v.userMax, got[i], want, tr.Stop)
					if t.Failed() && i > 20 {
						t.FailNow()
					}
				}
			}
			t.Logf("%d vectors agree; walker stops: %v", len(vecs), stops)
		})
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var maxEntriesDefine = regexp.MustCompile(`(?m)^#define UNWIND_MAX_ENTRIES((?:.*\\\n)*.*)$`)

// TestMaxEntriesFromSeed compiles UNWIND_MAX_ENTRIES, as deferred.c
// defines it at each revision, with that revision's struct unwind_cache,
// for 64-bit and 32-bit longs, and compares it with MaxEntries.
func TestMaxEntriesFromSeed(t *testing.T) {
	for _, rev := range []int{4, 5, 6, 11, 14} {
		for _, m32 := range []bool{false, true} {
			t.Run(fmt.Sprintf("patch%02d-m32=%t", rev, m32), func(t *testing.T) {
				needGCC(t, m32)
				files := seedFiles(t, rev)
				m := maxEntriesDefine.FindSubmatch(files["kernel/unwind/deferred.c"])
				if m == nil {
					t.Fatalf("no UNWIND_MAX_ENTRIES in deferred.c after patch %d", rev)
				}
				dir := t.TempDir()
				os.MkdirAll(filepath.Join(dir, "linux"), 0o755)
				os.WriteFile(filepath.Join(dir, "linux/unwind_deferred_types.h"), files["include/linux/unwind_deferred_types.h"], 0o644)
				src := fmt.Sprintf("#include <stdio.h>\n#include <linux/types.h>\n#include <linux/unwind_deferred_types.h>\n#define SZ_4K 0x1000\n#define UNWIND_MAX_ENTRIES%s\nint main(void) { printf(\"%%lu\\n\", (unsigned long)(UNWIND_MAX_ENTRIES)); return 0; }\n", m[1])
				os.WriteFile(filepath.Join(dir, "max.c"), []byte(src), 0o644)
				kc, _ := filepath.Abs("testdata/kernelc/shim")
				args := []string{"-o", filepath.Join(dir, "max"), "-I", dir, "-I", kc, filepath.Join(dir, "max.c")}
				long := 8
				if m32 {
					args = append(args, "-m32")
					long = 4
				}
				if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				out, err := exec.Command(filepath.Join(dir, "max")).Output()
				if err != nil {
					t.Fatal(err)
				}
				got, _ := strconv.Atoi(strings.TrimSpace(string(out)))
				if want := maxEntriesV11(t, rev, long); got != want {
					t.Errorf("UNWIND_MAX_ENTRIES after patch %d with %d-byte longs: kernel %d, MaxEntries %d", rev, long, got, want)
				}
				if rev >= 12 && !m32 {
					if c, _ := X86_64(11, rev); c.MaxEntries != got {
						t.Errorf("X86_64(%d).MaxEntries = %d, kernel %d", rev, c.MaxEntries, got)
					}
				}
			})
		}
	}
}
