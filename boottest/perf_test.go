package boottest

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/kerneltree"
	"kpatch/plumbing/ktap"
	"kpatch/plumbing/qemu"
	"kpatch/spec"
	"kpatch/templates/linux"
	"kpatch/unwind"
	"kpatch/unwind/symtab"
)

// TestPerfCases: the host's list is the program's table, in its order.
func TestPerfCases(t *testing.T) {
	want := []string{"shallow", "interrupt", "syscall", "deep", "truncated", "two_events", "exit_pending", "lost"}
	if got := PerfCases(); !reflect.DeepEqual(got, want) {
		t.Errorf("PerfCases() = %v, want %v", got, want)
	}
}

// TestPerfUserland compiles the perf programs -m64 and -m32 as the boot
// does and checks what the initramfs holds.
func TestPerfUserland(t *testing.T) {
	if err := CheckTools(context.Background(), false); err != nil {
		testenv.Missing(t, err.Error(), "run scripts/setup.sh")
	}
	dir := t.TempDir()
	progs, initrd, err := buildPerfUserland(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range PerfModes {
		f, err := elf.Open(progs[m.Program])
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.Symbols()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, s := range syms {
			have[s.Name] = true
		}
		for _, fn := range []string{"spin_leaf", "spin_leaf_loop", "ps_syscall", "bottom", "rec", "case_exit_pending"} {
			if !have[fn] {
				t.Errorf("%s has no symbol %s", m.Program, fn)
			}
		}
		wantClass := map[string]elf.Class{"perf_deferred64": elf.ELFCLASS64, "perf_deferred32": elf.ELFCLASS32}[m.Program]
		if f.Class != wantClass {
			t.Errorf("%s is %v, want %v", m.Program, f.Class, wantClass)
		}
	}
	b, err := os.ReadFile(initrd)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"dev/console", "init", "bin/perf_deferred32", "bin/perf_deferred64", "TRAILER!!!"} {
		if !bytes.Contains(b, []byte(n+"\x00")) {
			t.Errorf("initramfs lacks %s", n)
		}
	}
}

// perfTestSyms reads the symbols of the programs of a saved run
// (testdata/DIR/perf_deferred{64,32}.syms, nm's output).
func perfTestSyms(t *testing.T, dir string) map[string]*symtab.Table {
	t.Helper()
	out := map[string]*symtab.Table{}
	for _, m := range PerfModes {
		f, err := os.Open(filepath.Join("testdata", dir, m.Program+".syms"))
		if err != nil {
			t.Fatal(err)
		}
		s := new(symtab.Table)
		err = s.AddNM(m.Program, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[m.Subtest] = s
	}
	return out
}

// TestCheckPerfSaved checks the console of a boot of Debian's 7.3 as
// shipped (testdata/perf-7.3): every case of both modes passes, every
// pair is walked, and the expected chains are found.
func TestCheckPerfSaved(t *testing.T) {
	console := readGz(t, "perf-7.3/console.log.gz")
	a := CheckPerf(console, perfTestSyms(t, "perf-7.3"), PerfCases(), mergedWalker(t))
	if !a.Passed() {
		for _, c := range a.Cases {
			t.Logf("%s %s %s %s", c.Mode, c.Name, c.Status, c.Reason)
		}
		t.Fatalf("saved 7.3 run does not pass: %v", a.Problems)
	}
	traces := map[string]int{}
	for _, c := range a.Cases {
		traces[c.Mode] += c.Traces
		if c.Status != Pass {
			t.Errorf("%s %s: %s", c.Mode, c.Name, c.Status)
		}
		if c.Name != "lost" && c.Traces == 0 {
			t.Errorf("%s %s: no pair walked", c.Mode, c.Name)
		}
	}
	for _, m := range PerfModes {
		if traces[m.Subtest] < 10 {
			t.Errorf("%s: %d pairs walked, want at least 10", m.Subtest, traces[m.Subtest])
		}
	}
}

// TestCheckPerfBroken breaks the saved run three ways and requires the
// check to fail, each time naming what differs: a deferred entry changed
// (the walker and the record disagree), the stack copy cut short (the
// walker faults: the two walks are shown with the faulting address), and
// a perf-sample line lost.
func TestCheckPerfBroken(t *testing.T) {
	console := string(readGz(t, "perf-7.3/console.log.gz"))
	syms := perfTestSyms(t, "perf-7.3")
	// The deferred record of the first pair: its third entry (offset 8
	// header + 8 cookie + 8 nr + 2*8) set to 0x401000.
	i := strings.Index(console, "# perf-deferred: 0 ")
	if i < 0 {
		t.Fatal("no perf-deferred line in the saved console")
	}
	hexStart := i + len("# perf-deferred: 0 ")
	off := hexStart + 2*(8+8+8+16)
	changed := console[:off] + "0010400000000000" + console[off+16:]
	cases := []struct {
		name, console, want string
	}{
		{"deferred entry changed", changed, "differs from the walker's walk"},
		{"sample line lost", strings.Replace(console, "# perf-sample: 64 ", "# perf-sample-lost: 64 ", 1), "bad perf-sample line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := CheckPerf([]byte(c.console), syms, PerfCases(), mergedWalker(t))
			if a.Passed() {
				t.Fatal("passed")
			}
			found := false
			for _, r := range a.Cases {
				if r.Status == Fail && strings.Contains(r.Reason, c.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no case failed with %q", c.want)
			}
		})
	}
}

// TestCheckPerfFault cuts the stack copy of the saved run's first pair
// short (dyn_size 64): the walker faults past the copy, the case fails,
// and the report shows the two walks side by side with the faulting
// address.
func TestCheckPerfFault(t *testing.T) {
	console := readGz(t, "perf-7.3/console.log.gz")
	root, _ := ktap.Parse(bytes.NewReader(console))
	sub := root.Find("perf_x86_64")
	if sub == nil || len(sub.Subtests) == 0 {
		t.Fatal("no perf_x86_64 results in the saved console")
	}
	pairs, err := ParsePerfPairs(sub.Subtests[0].Log)
	if err != nil || len(pairs) == 0 {
		t.Fatalf("%d pairs, %v", len(pairs), err)
	}
	p := pairs[0]
	full := p.Sample.Stack
	// A copy the kernel cut short (dyn_size below the size asked for, as
	// when the sample found a stack page missing) is compared as far as
	// it goes.
	p.Sample.Stack = full[:64]
	r := checkPerfPairs(CaseResult{Mode: "perf_x86_64", Name: sub.Subtests[0].Name, Status: Pass}, pairs[:1], nil, perfTestSyms(t, "perf-7.3")["perf_x86_64"], mergedWalker(t))
	if r.Status != Pass || len(r.Info) != 1 || !strings.Contains(r.Info[0], "entries compared") {
		t.Errorf("a copy cut short by the kernel: %s %q, info %q", r.Status, r.Reason, r.Info)
	}
	// A copy that holds all it was asked for but not what the kernel read.
	p.Sample.StackSize = 64
	s, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := mergedWalker(t).Walk(s.Memory(), s.Regs)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Fault == nil || len(tr.IPs()) >= len(s.Kernel) {
		t.Fatalf("walk of a 64-byte copy: %d entries, fault %v; the record has %d", len(tr.IPs()), tr.Fault, len(s.Kernel))
	}
	r = checkPerfPairs(CaseResult{Mode: "perf_x86_64", Name: sub.Subtests[0].Name, Status: Pass}, pairs[:1], nil, perfTestSyms(t, "perf-7.3")["perf_x86_64"], mergedWalker(t))
	if r.Status != Fail || len(r.Mismatches) != 1 {
		t.Fatalf("a cut stack copy: %s, %d mismatches", r.Status, len(r.Mismatches))
	}
	var b bytes.Buffer
	(&Report{Cases: []CaseResult{r}}).WriteText(&b)
	out := b.String()
	if !strings.Contains(out, "fault reading 8 bytes at") || !strings.Contains(out, "KERNEL") || !strings.Contains(out, "WALKER") || !strings.Contains(out, "\n! ") {
		t.Errorf("report lacks the side-by-side walks or the faulting address:\n%s", out)
	}
	t.Log("\n" + out)
}

// TestPerfKunit: kunit.py parse reads the saved console's KTAP with the
// same counts as kpatch's reader and CheckPerf.
func TestPerfKunit(t *testing.T) {
	tree := testenv.KernelTree(t)
	py := testenv.Tool(t, "python3", "python3")
	console := readGz(t, "perf-7.3/console.log.gz")
	f := filepath.Join(t.TempDir(), "console.log")
	if err := os.WriteFile(f, console, 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(t.TempDir(), "kunit.json")
	cmd := exec.Command(py, filepath.Join(tree, "tools/testing/kunit/kunit.py"), "parse", "--json="+js, f)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kunit.py parse: %v\n%s", err, out)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	// kunit.py's KernelCI form: groups (one per KTAP subtest) of cases.
	var doc struct {
		SubGroups []struct {
			Name      string `json:"name"`
			TestCases []struct {
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"test_cases"`
		} `json:"sub_groups"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	kunit := map[string]string{}
	for _, g := range doc.SubGroups {
		for _, c := range g.TestCases {
			kunit[g.Name+"/"+c.Name] = c.Status
		}
	}
	a := CheckPerf(console, perfTestSyms(t, "perf-7.3"), PerfCases(), mergedWalker(t))
	if len(kunit) != len(a.Cases) {
		t.Errorf("kunit.py reads %d cases, kpatch %d", len(kunit), len(a.Cases))
	}
	for _, c := range a.Cases {
		want := map[Status]string{Pass: "PASS", Fail: "FAIL", Skip: "SKIP"}[c.Status]
		if got := kunit[c.Mode+"/"+c.Name]; got != want {
			t.Errorf("%s/%s: kunit.py says %q, kpatch %q", c.Mode, c.Name, got, want)
		}
	}
}

// TestQEMUShipped makes Debian's 7.3 tree, builds it unmodified and boots
// it with the perf cases under TCG: every case of both modes must pass.
func TestQEMUShipped(t *testing.T) {
	testenv.Full(t, "builds and boots Linux 7.3, cold 10 to 25 minutes")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	if err := CheckTools(ctx, true); err != nil {
		testenv.Missing(t, err.Error(), "run scripts/setup.sh")
	}
	k := kerneltree.ShippedKernels["debian-7.3"]
	if _, err := os.Stat(k.Tarball); err != nil {
		t.Skipf("opt-in, not installed: %v (or KPATCH_LINUX_SOURCE=7.3 scripts/test.sh)", &kerneltree.MissingTarballError{Kernel: k})
	}
	rep, err := RunShipped(ctx, k, PerfOptions{Log: testLog{t}, Jobs: 2, Accel: qemu.AccelTCG, BootTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	t.Log("\n" + b.String())
	if !rep.Passed {
		t.Fatal("perf cases failed on Debian's 7.3")
	}
}

func mergedWalker(t testing.TB) unwind.Config {
	t.Helper()
	c, err := MergedWalker()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMergedFacts: the walker's model of 7.3 is the x86-6.19 stack's
// walker facts after its last patch (6.19 as merged), which the
// differential tests of package unwind check against 6.19's user.c.
func TestMergedFacts(t *testing.T) {
	sp, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sp.Stack("x86-6.19", 0)
	if err != nil {
		t.Fatal(err)
	}
	facts, err := r.Facts(unwind.WalkerFacts, len(r.Patches))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(facts, MergedFacts) {
		t.Errorf("x86-6.19 after patch %d: %v\nMergedFacts: %v", len(r.Patches), facts, MergedFacts)
	}
	want, err := unwind.X86_64At(r, len(r.Patches))
	if err != nil {
		t.Fatal(err)
	}
	if got := mergedWalker(t); !reflect.DeepEqual(got, want) {
		t.Errorf("MergedWalker() = %+v, want %+v", got, want)
	}
}

// TestQEMUPerfSeries builds the generated x86 part as 6.19 merged it (v16
// and its sixteen commits on Debian's 6.12, without the test driver) and
// boots it with the perf cases under TCG: every deferred user stack of
// both modes must equal the walker's walk of the sample's stack copy.
func TestQEMUPerfSeries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	tree := requireTools(t, ctx)
	s, err := seriestest.Generate(ctx, seriestest.Options{Tree: tree, Base: "v6.12", Version: bootRevision, Stack: bootStack, WithPrerequisite: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunPerfSeries(ctx, s, PerfOptions{Log: testLog{t}, Jobs: 2, Accel: qemu.AccelTCG, BootTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	t.Log("\n" + b.String())
	if !rep.Passed {
		t.Fatalf("perf cases failed on %s", s.Revision.Name())
	}
	if n := len(rep.Cases); n != 2*len(PerfCases()) {
		t.Errorf("%d cases ran, want %d (every perf case in both modes)", n, 2*len(PerfCases()))
	}
}
