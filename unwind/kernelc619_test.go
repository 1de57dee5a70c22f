package unwind

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// Linux 6.19's unwinder in the differential test: kernel/unwind/user.c,
// the unwind headers and arch/x86/include/asm/{unwind_user,uprobes}.h as
// ../shared/revisions/v6.19 holds them (checked by blob id there), and
// is_uprobe_at_func_entry() cut from its arch/x86/kernel/uprobes.c, built
// for user space with testdata/kernelc, against the walker with the
// configuration the x86-6.19 stack's walker facts give (facts619 here).
// The state after patch 12 of the 16 ("Enable frame pointer unwinding on
// x86", before "Teach FP unwind about start of function") is v6.19 with
// patches 15 and 13 taken back out by git apply -R.

// sharedRevisions is ../shared/revisions, found from the working directory
// up; the test fails without it (docs/tests.md).
func sharedRevisions(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "revisions")
		if st, err := os.Stat(filepath.Join(p, "v6.19")); err == nil && st.IsDir() {
			return p
		}
		if dir == filepath.Dir(dir) {
			t.Fatalf("no shared/revisions/v6.19 above %s: the checkout needs shared/ beside it (docs/tests.md)", wd)
			return ""
		}
	}
}

// files619 are the files of the series the harness needs, with x86's
// uprobes.h, as in Linux 6.19.
var files619 = []string{
	"kernel/unwind/user.c",
	"include/linux/unwind_user.h",
	"include/linux/unwind_user_types.h",
	"include/asm-generic/unwind_user.h",
	"arch/x86/include/asm/unwind_user.h",
	"arch/x86/include/asm/uprobes.h",
}

// tree619 returns the files of files619 after patch (12 or 16) of
// ../shared/revisions/x86-6.19.
func tree619(patch int) func(t *testing.T) map[string][]byte {
	return func(t *testing.T) map[string][]byte {
		t.Helper()
		rev := sharedRevisions(t)
		dir := t.TempDir()
		for _, f := range files619 {
			data, err := os.ReadFile(filepath.Join(rev, "v6.19", f))
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if patch < 16 {
			// Take back 0015 and 0013, newest first; 0014 touches
			// none of these files.
			for _, p := range []string{"0015-unwind_user-x86-Fix-arch-um-build.patch", "0013-unwind_user-x86-Teach-FP-unwind-about-start-of-funct.patch"} {
				args := []string{"apply", "-R"}
				for _, f := range files619 {
					args = append(args, "--include="+f)
				}
				cmd := exec.Command("git", append(args, filepath.Join(rev, "x86-6.19", p))...)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git apply -R %s: %v\n%s", p, err, out)
				}
			}
		}
		m := map[string][]byte{}
		for _, f := range files619 {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			m[f] = data
		}
		return m
	}
}

// funcEntryDef is is_uprobe_at_func_entry()'s definition in uprobes.c.
var funcEntryDef = regexp.MustCompile(`(?ms)^bool is_uprobe_at_func_entry\(struct pt_regs \*regs\)\n\{\n.*?^\}\n`)

// funcEntry writes funcentry.c: is_uprobe_at_func_entry() as 6.19's
// arch/x86/kernel/uprobes.c defines it, and the kp_set_uprobe() the
// harness calls to set current->utask->auprobe.
func funcEntry(t *testing.T, dir string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(sharedRevisions(t), "v6.19", "arch/x86/kernel/uprobes.c"))
	if err != nil {
		t.Fatal(err)
	}
	def := funcEntryDef.Find(src)
	if def == nil {
		t.Fatal("no is_uprobe_at_func_entry() in v6.19's arch/x86/kernel/uprobes.c")
	}
	c := `#include <linux/kernel.h>
#include <linux/sched.h>
#include <asm/ptrace.h>
#include <asm/uprobes.h>
#include <asm/ibt.h>

static struct arch_uprobe kp_auprobe;
static struct uprobe_task kp_utask;

void kp_set_uprobe(int on, const unsigned char *insn)
{
	if (!on) {
		kp_current.utask = NULL;
		return;
	}
	memcpy(kp_auprobe.insn, insn, sizeof(kp_auprobe.insn));
	kp_utask.auprobe = &kp_auprobe;
	kp_current.utask = &kp_utask;
}

` + string(def)
	p := filepath.Join(dir, "funcentry.c")
	if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{p}
}

// facts619 are the walker facts of the x86-6.19 stack (on v16) after
// patch 12 of the 16 and from patch 13 on (README of x86-6.19).
func facts619(patch int) map[string]string {
	f := map[string]string{
		"fp":          "x86_64",
		"compat-fp":   "word-size",
		"fp-below-sp": "stop",
		"align":       "word-size",
		"max-entries": "510",
	}
	if patch >= 13 {
		f["function-start"] = "uprobe"
	}
	return f
}

func config619(t testing.TB, patch int, ibt bool) func() Config {
	return func() Config {
		c, err := FromFacts(facts619(patch))
		if err != nil {
			t.Fatal(err)
		}
		c.NoIBT = !ibt
		return c
	}
}

// uprobeInsns are probed instructions: push %rbp, endbr64, endbr32, the
// mov %rsp,%rbp after push (64- and 32-bit encodings), a REX push (push
// %r13), nop.
var uprobeInsns = [][4]byte{
	{0x55, 0x48, 0x89, 0xe5},
	{0xf3, 0x0f, 0x1e, 0xfa},
	{0xf3, 0x0f, 0x1e, 0xfb},
	{0x48, 0x89, 0xe5, 0x90},
	{0x89, 0xe5, 0x83, 0xec},
	{0x41, 0x55, 0x90, 0x90},
	{0x90, 0x55, 0x48, 0x89},
}

func kernelVariants619(t testing.TB) []kernelVariant {
	base := []string{"CONFIG_UNWIND_USER", "CONFIG_HAVE_UNWIND_USER_FP", "CONFIG_X86_64", "CONFIG_COMPAT", "CONFIG_UPROBES"}
	return []kernelVariant{
		{name: "x86-6.19-patch12", rev: 12, defines: base, config: config619(t, 12, true),
			files: tree619(12), extra: funcEntry, uprobes: true},
		{name: "x86-6.19-patch16", rev: 16, defines: append([]string{"CONFIG_X86_KERNEL_IBT"}, base...), config: config619(t, 16, true),
			files: tree619(16), extra: funcEntry, uprobes: true},
		{name: "x86-6.19-patch16-no-ibt", rev: 16, defines: base, config: config619(t, 16, false),
			files: tree619(16), extra: funcEntry, uprobes: true},
	}
}

// gdbSnapshotPy prints, at a stop, the task's registers and its stack from
// sp up to the end of its mapping (at most 256 KiB) as a snapshot, the 16
// bytes at ip, and gdb's backtrace (gdb reads the CFI).
const gdbSnapshotPy = `python
import gdb
inf = gdb.selected_inferior()
f = gdb.newest_frame()
is64 = "x86-64" in f.architecture().name()
pc = int(gdb.parse_and_eval("$pc"))
sp = int(gdb.parse_and_eval("$sp"))
bp = int(gdb.parse_and_eval("$rbp" if is64 else "$ebp")) & (2**64 - 1 if is64 else 2**32 - 1)
print("snapshot: v=1 mode=%s ip=%#x sp=%#x bp=%#x" % ("64" if is64 else "compat", pc, sp, bp))
addr = sp
while addr < sp + 256 * 1024:
    try:
        b = bytes(inf.read_memory(addr, 64))
    except gdb.MemoryError:
        break
    print("stack: %#x %s" % (addr, b.hex()))
    addr += 64
print("end:")
print("INSN %s" % bytes(inf.read_memory(pc, 16)).hex())
i = 0
while f is not None and i < 100:
    print("GDBFRAME %#x %s" % (f.pc(), f.name() or "??"))
    f = f.older()
    i += 1
end
`

type gdbStop struct {
	snap   *Snapshot
	insn   [4]byte
	frames []uint64 // gdb's backtrace to main
}

// gdbStops builds testdata/chain.c with flags, runs "chain recurse 3"
// under gdb stopped at leaf's first instruction and steps steps times,
// and returns the stack, the instruction and gdb's backtrace at each
// stop.
func gdbStops(t *testing.T, flags []string, steps int) []gdbStop {
	t.Helper()
	testenv.Tool(t, "gdb", "gdb")
	dir := t.TempDir()
	prog := filepath.Join(dir, "chain")
	args := append([]string{"-O0", "-g", "-fno-omit-frame-pointer", "-static", "-o", prog, "testdata/chain.c"}, flags...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", flags, err, out)
	}
	script := filepath.Join(dir, "snap.gdb")
	if err := os.WriteFile(script, []byte(gdbSnapshotPy), 0o644); err != nil {
		t.Fatal(err)
	}
	gargs := []string{"-batch", "-nx", "-ex", "set pagination off", "-ex", "set startup-with-shell off", "-ex", "break *leaf", "-ex", "run", "-x", script}
	for range steps {
		gargs = append(gargs, "-ex", "stepi", "-x", script)
	}
	gargs = append(gargs, "-ex", "kill", "--args", prog, "recurse", "3")
	cmd := exec.Command("gdb", gargs...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	snaps, err := ParseSnapshots(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var stops []gdbStop
	for _, line := range strings.Split(string(out), "\n") {
		if h, ok := strings.CutPrefix(line, "INSN "); ok {
			b, err := hex.DecodeString(h)
			if err != nil || len(b) < 4 {
				t.Fatalf("gdb printed %q", line)
			}
			stops = append(stops, gdbStop{insn: [4]byte(b[:4])})
		}
		if f, ok := strings.CutPrefix(line, "GDBFRAME "); ok && len(stops) > 0 {
			s := &stops[len(stops)-1]
			pc, name, _ := strings.Cut(f, " ")
			v, err := strconv.ParseUint(pc, 0, 64)
			if err != nil {
				t.Fatalf("gdb printed %q", line)
			}
			if slices.Contains(s.frames, 0) {
				continue // past main
			}
			s.frames = append(s.frames, v)
			if name == "main" {
				s.frames = append(s.frames, 0) // the end mark
			}
		}
	}
	if len(snaps) != steps+1 || len(stops) != steps+1 {
		t.Fatalf("gdb printed %d snapshots and %d stops for %d steps:\n%s", len(snaps), len(stops), steps, out)
	}
	for i := range stops {
		stops[i].snap = snaps[i]
		if n := len(stops[i].frames); n < 5 || stops[i].frames[n-1] != 0 {
			t.Fatalf("stop %d: gdb's backtrace %x does not reach main through leaf, rec x3", i, stops[i].frames)
		}
		stops[i].frames = stops[i].frames[:len(stops[i].frames)-1]
	}
	return stops
}

// Real stacks through Linux 6.19's own unwinder: chain.c stopped by gdb at
// leaf's first instruction and after, 64-bit and IA32, with and without
// ENDBR, each walked as in a uprobe handler at ip and outside one by
// v6.19's kernel/unwind/user.c (the harness, an IBT kernel) and by the
// walker. The two traces are equal; where the start-of-function rule
// applies, the kernel's trace begins with gdb's backtrace to main, and
// where it does not (after push, at endbr32 in IA32, outside a uprobe),
// with gdb's backtrace less the caller.
func TestRealStacks619(t *testing.T) {
	testenv.Tool(t, "gcc", "gcc")
	kv := kernelVariants619(t)[1]
	bin := buildHarness(t, kv)
	cfg := kv.config()
	for _, b := range []struct {
		name  string
		flags []string
		steps int
	}{
		{"64", nil, 1},
		{"32", []string{"-m32"}, 1},
		{"cet64", []string{"-fcf-protection=branch"}, 2},
		{"cet32", []string{"-m32", "-fcf-protection=branch"}, 2},
	} {
		t.Run(b.name, func(t *testing.T) {
			if slices.Contains(b.flags, "-m32") {
				testenv.Run32(t)
			}
			stops := gdbStops(t, b.flags, b.steps)
			var vecs []vector
			for _, s := range stops {
				for _, inUprobe := range []bool{true, false} {
					r := s.snap.Regs
					r.Uprobe, r.UprobeInsn = inUprobe, s.insn
					vecs = append(vecs, vector{regs: r, mem: s.snap.Stack, max: cfg.MaxEntries, userMax: cfg.UserMax})
				}
			}
			kernel := runHarness(t, bin, vecs)
			for i, v := range vecs {
				s := stops[i/2]
				tr, err := cfg.Walk(v.mem, v.regs)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("stop %d (insn %x, compat %v), uprobe %v", i/2, s.insn, v.regs.Compat, v.regs.Uprobe)
				if !equalU64(kernel[i], tr.IPs()) {
					t.Errorf("%s:\nkernel %x\nwalker %x", name, kernel[i], tr.IPs())
				}
				want := s.frames
				if !v.regs.Uprobe || !AtFunctionStart(v.regs, true) {
					want = append([]uint64{s.frames[0]}, s.frames[2:]...)
				}
				if len(kernel[i]) < len(want) || !equalU64(kernel[i][:len(want)], want) {
					t.Errorf("%s: kernel %x, want gdb's %x first", name, kernel[i], want)
				}
				t.Logf("%s: kernel = walker, %d entries; first %d as gdb's (rule applies: %v)", name, len(kernel[i]), len(want), len(want) == len(s.frames))
			}
		})
	}
}

// UNWIND_MAX_ENTRIES, compiled from v6.19's deferred.c and struct
// unwind_cache, is the x86-6.19 facts' max-entries.
func TestMaxEntries619(t *testing.T) {
	needGCC(t, false)
	rev := sharedRevisions(t)
	deferred, err := os.ReadFile(filepath.Join(rev, "v6.19", "kernel/unwind/deferred.c"))
	if err != nil {
		t.Fatal(err)
	}
	m := maxEntriesDefine.FindSubmatch(deferred)
	if m == nil {
		t.Fatal("no UNWIND_MAX_ENTRIES in v6.19's deferred.c")
	}
	types, err := os.ReadFile(filepath.Join(rev, "v6.19", "include/linux/unwind_deferred_types.h"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "linux"), 0o755)
	os.WriteFile(filepath.Join(dir, "linux/unwind_deferred_types.h"), types, 0o644)
	src := fmt.Sprintf("#include <stdio.h>\n#include <linux/types.h>\n#include <linux/unwind_deferred_types.h>\n#define SZ_4K 0x1000\n#define UNWIND_MAX_ENTRIES%s\nint main(void) { printf(\"%%lu\\n\", (unsigned long)(UNWIND_MAX_ENTRIES)); return 0; }\n", m[1])
	os.WriteFile(filepath.Join(dir, "max.c"), []byte(src), 0o644)
	kc, _ := filepath.Abs("testdata/kernelc/shim")
	if out, err := exec.Command("gcc", "-o", filepath.Join(dir, "max"), "-I", dir, "-I", kc, filepath.Join(dir, "max.c")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(dir, "max")).Output()
	if err != nil {
		t.Fatal(err)
	}
	c, err := FromFacts(facts619(16))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != strconv.Itoa(c.MaxEntries) {
		t.Errorf("UNWIND_MAX_ENTRIES of v6.19 is %s, the facts' max-entries %d", got, c.MaxEntries)
	}
}
