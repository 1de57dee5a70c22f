package core_test

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/unwind"
	"kpatch/unwind/core"
	"kpatch/unwind/symtab"
)

// Linux 6.19's start-of-function rule on real programs: chain.c stopped
// by gdb at leaf's first instruction, and at the instructions after it,
// 64-bit and IA32, with and without ENDBR at function entry
// (-fcf-protection=branch). The walker with the x86-6.19 stack's facts
// (walkerFacts619), as the kernel walks in a uprobe handler at that
// instruction, must equal gdb's backtrace (gdb reads the CFI) where the
// kernel's rule applies, and lack exactly the caller where the kernel
// deliberately does not apply it: after push %bp (the probed instruction
// is mov), at endbr32 in an IA32 task (is_endbr() counts only in 64-bit
// mode), and whenever the walk is not made in a uprobe handler.

// walkerFacts619 are the walker facts the x86-6.19 stack carries from its
// patch 13 on (unwind's TestFromFacts619 has them too).
var walkerFacts619 = map[string]string{
	"fp":             "x86_64",
	"compat-fp":      "word-size",
	"fp-below-sp":    "stop",
	"align":          "word-size",
	"function-start": "uprobe",
	"max-entries":    "510",
}

var builds619 = []build{
	{"64", []string{"-static"}, ""},
	{"32", []string{"-m32", "-static"}, ""},
	{"cet64", []string{"-static", "-fcf-protection=branch"}, ""},
	{"cet32", []string{"-m32", "-static", "-fcf-protection=branch"}, ""},
}

// entryCores stops prog (recurse 3) at leaf's first instruction under gdb
// and writes a core there and after each of the next steps; cores[i] is
// the core after i single steps.
func entryCores(t *testing.T, prog string, steps int) []string {
	t.Helper()
	runnable(t, prog)
	needGDB(t)
	dir := t.TempDir()
	args := []string{"-ex", "break *leaf", "-ex", "run"}
	var cores []string
	for i := 0; i <= steps; i++ {
		if i > 0 {
			args = append(args, "-ex", "stepi")
		}
		c := filepath.Join(dir, fmt.Sprintf("step%d.core", i))
		args = append(args, "-ex", "gcore "+c)
		cores = append(cores, c)
	}
	args = append(args, "-ex", "kill", "--args", prog, "recurse", "3")
	out := runGDB(t, args...)
	for _, c := range cores {
		if _, err := os.Stat(c); err != nil {
			t.Fatalf("gdb wrote no %s: %v\n%s", filepath.Base(c), err, out)
		}
	}
	return cores
}

func TestStartOfFunction619(t *testing.T) {
	cfg, err := unwind.FromFacts(walkerFacts619)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range builds619 {
		t.Run(b.name, func(t *testing.T) {
			if strings.HasSuffix(b.name, "32") {
				testenv.Build32(t)
			}
			prog := program(t, b)
			cet := strings.HasPrefix(b.name, "cet")
			compat := strings.HasSuffix(b.name, "32")
			steps := 1
			if cet {
				steps = 2
			}
			cores := entryCores(t, prog, steps)
			for i, corePath := range cores {
				c, err := core.Open(corePath)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				regs := c.Threads[0].Regs
				if regs.Compat != compat {
					t.Fatalf("%s: compat %v", b.name, regs.Compat)
				}
				var insn [4]byte
				if err := c.ReadAt(insn[:], regs.IP); err != nil {
					t.Fatal(err)
				}
				// What the probed instruction is, after i steps.
				var what string
				switch {
				case cet && i == 0 && insn == [4]byte{0xf3, 0x0f, 0x1e, 0xfa}:
					what = "endbr64"
				case cet && i == 0 && insn == [4]byte{0xf3, 0x0f, 0x1e, 0xfb}:
					what = "endbr32"
				case i == 0 && !cet || i == 1 && cet:
					what = "push"
					if insn[0] != 0x55 {
						t.Fatalf("step %d: instruction %x at ip %#x, want push %%bp", i, insn, regs.IP)
					}
				default:
					what = "mov"
				}
				if cet && i == 0 && what == "mov" {
					t.Fatalf("no ENDBR at leaf with -fcf-protection=branch: %x", insn)
				}
				// The kernel applies the rule at push, and at ENDBR in
				// a 64-bit task (an IBT kernel: Debian's and the boot
				// test's configurations have X86_KERNEL_IBT=y).
				applies := what == "push" || what == "endbr64" || what == "endbr32" && !compat
				gdb := fpChain(gdbBacktrace(t, prog, corePath))
				tab, _ := c.Symbols(prog)
				for _, inUprobe := range []bool{true, false} {
					r := regs
					r.Uprobe, r.UprobeInsn = inUprobe, insn
					tr, err := cfg.Walk(c, r)
					if err != nil {
						t.Fatal(err)
					}
					want := gdb
					if !applies || !inUprobe {
						want = append(append([]gdbFrame{}, gdb[0]), gdb[2:]...) // the caller missed
					}
					checkPrefix(t, fmt.Sprintf("step %d at %s, uprobe %v", i, what, inUprobe), tr, tab, want)
				}
			}
		})
	}
}

// checkPrefix checks that the walk's first entries are want's frames.
func checkPrefix(t *testing.T, name string, tr *unwind.Trace, tab *symtab.Table, want []gdbFrame) {
	t.Helper()
	ips := tr.IPs()
	if len(ips) < len(want) {
		t.Errorf("%s: walker %x (stop %v), want at least %d entries: %v", name, ips, tr.Stop, len(want), want)
		return
	}
	for i, f := range want {
		got := tab.Locate(ips[i], i > 0).Func
		if ips[i] != f.pc || got != f.name {
			t.Errorf("%s: entry %d is %#x %s, want %#x %s (walker %x)", name, i, ips[i], got, f.pc, f.name, ips[:len(want)])
			return
		}
	}
	var names []string
	for _, f := range want {
		names = append(names, fmt.Sprintf("%#x %s", f.pc, f.name))
	}
	t.Logf("%s: %d entries equal gdb's frames %s", name, len(want), strings.Join(names, ", "))
}

// kpatch unwind walks a 32-bit core by 6.19's rules with the walker facts
// of the x86-6.19 stack, given here to the x86 stack of a spec copy, as
// --stack x86-6.19 gives them: --uprobe at push %ebp finds the caller,
// without it the caller is missed, as the kernel misses it.
func TestCommandStartOfFunction619(t *testing.T) {
	testenv.Build32(t)
	prog := program(t, builds619[1])
	corePath := entryCores(t, prog, 0)[0]
	spec := filepath.Join(t.TempDir(), "spec")
	if out, code := runKpatchCombined(t, "spec", "-o", spec); code != 0 {
		t.Fatalf("kpatch spec: %s", out)
	}
	var facts strings.Builder
	facts.WriteString("{{if since \"x86-fp\"}}\n")
	for _, k := range []string{"fp", "compat-fp", "fp-below-sp", "align", "function-start", "max-entries"} {
		fmt.Fprintf(&facts, "%s: %s\n", k, walkerFacts619[k])
	}
	facts.WriteString("{{end}}\n")
	if err := os.WriteFile(filepath.Join(spec, "facts", "walker.tmpl"), []byte(facts.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	gdb := fpChain(gdbBacktrace(t, prog, corePath))
	frame := regexp.MustCompile(`^#(\d+) +0x[0-9a-f]{8} (\S+)\+0x[0-9a-f]+ `)
	for _, tc := range []struct {
		uprobe bool
		want   []gdbFrame
	}{
		{true, gdb},
		{false, append(append([]gdbFrame{}, gdb[0]), gdb[2:]...)},
	} {
		args := []string{"unwind", "--core", corePath, "--exe", prog, "--spec", spec, "--stack", "x86"}
		if tc.uprobe {
			args = append(args, "--uprobe")
		}
		out, code := runKpatchCombined(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
		lines := strings.Split(out, "\n")
		if !strings.Contains(out, "kind compat-fp, mode compat") {
			t.Errorf("%v: not a compat walk:\n%s", args, out)
		}
		if said := strings.Contains(out, "uprobe at a function's start: entry 1 read at sp"); said != tc.uprobe {
			t.Errorf("%v: says the start-of-function rule applied: %v\n%s", args, said, out)
		}
		for i, f := range tc.want {
			m := frame.FindStringSubmatch(lines[i])
			if m == nil || m[2] != f.name || !strings.Contains(lines[i], fmt.Sprintf("0x%08x", f.pc)) {
				t.Errorf("--uprobe %v: line %d %q, want %#x %s\n%s", tc.uprobe, i, lines[i], f.pc, f.name, out)
				break
			}
		}
	}
	// The snapshot of the core keeps the uprobe and walks the same.
	snap := filepath.Join(t.TempDir(), "entry.snap")
	coreArgs := []string{"unwind", "--core", corePath, "--exe", prog, "--spec", spec, "--stack", "x86", "--uprobe"}
	fromCore, code := runKpatchCombined(t, append(coreArgs, "--write-snapshot", snap)...)
	if code != 0 {
		t.Fatalf("--write-snapshot: exit %d\n%s", code, fromCore)
	}
	if data, _ := os.ReadFile(snap); !strings.Contains(string(data), " uprobe=") {
		t.Errorf("the snapshot has no uprobe= field:\n%s", data)
	}
	fromSnap, code := runKpatchCombined(t, "unwind", "--snapshot", snap, "--exe", prog, "--spec", spec, "--stack", "x86")
	if code != 0 || fromSnap != fromCore {
		t.Errorf("snapshot walk (exit %d) differs from the core's:\n%s\n%s", code, fromSnap, fromCore)
	}
	// A core that holds the uprobe's int3 at ip: the probed instruction
	// is read from the file mapped there, as the kernel copied it.
	trapped := withInt3AtIP(t, corePath)
	fromTrap, code := runKpatchCombined(t, "unwind", "--core", trapped, "--exe", prog, "--spec", spec, "--stack", "x86", "--uprobe")
	if code != 0 || fromTrap != fromCore {
		t.Errorf("core with int3 at ip (exit %d) walks otherwise:\n%s\n%s", code, fromTrap, fromCore)
	}
	// A posted revision has no such rule: --uprobe changes nothing there.
	out, code := runKpatchCombined(t, "unwind", "--core", corePath, "-v", "13", "--uprobe")
	if code != 0 || !strings.Contains(out, "has no start-of-function rule") {
		t.Errorf("-v 13 --uprobe: exit %d\n%s", code, out)
	}
}

func runKpatchCombined(t *testing.T, args ...string) (string, int) {
	t.Helper()
	stdout, stderr, code := runKpatch(t, args...)
	return stdout + stderr, code
}

// withInt3AtIP copies the core with 0xcc written over the byte at the
// first thread's ip in its PT_LOAD bytes, as a core of a task with a
// uprobe there holds it.
func withInt3AtIP(t *testing.T, corePath string) string {
	t.Helper()
	c, err := core.Open(corePath)
	if err != nil {
		t.Fatal(err)
	}
	ip := c.Threads[0].Regs.IP
	c.Close()
	ef, err := elf.Open(corePath)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	data, err := os.ReadFile(corePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && ip >= p.Vaddr && ip-p.Vaddr < p.Filesz {
			data[p.Off+ip-p.Vaddr] = 0xcc
			out := filepath.Join(t.TempDir(), "trapped.core")
			if err := os.WriteFile(out, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	t.Skipf("the core holds no bytes at ip %#x", ip)
	return ""
}
