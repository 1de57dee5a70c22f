package boottest

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kpatch/internal/seriestest"
	"kpatch/plumbing/qemu"
	"kpatch/series"
)

// splatMutation is code put at the top of unwind_deferred_request() for
// TestQEMUDebugSplats: from a system call (interrupts on) it takes a raw
// spinlock; from the timer case's hard interrupt it takes the same lock
// (lockdep: inconsistent lock state) and calls might_sleep()
// (DEBUG_ATOMIC_SLEEP); from the kernel thread of kthread_einval it reads
// past a stack array (KASAN: stack-out-of-bounds). KASAN's report turns
// lockdep off, so it comes last.
const splatMutation = `	{
		static DEFINE_RAW_SPINLOCK(kpatch_splat_lock);
		volatile int kpatch_i = 2;
		unsigned long kpatch_a[2] = { 0, 0 };

		if (in_hardirq()) {
			raw_spin_lock(&kpatch_splat_lock);
			raw_spin_unlock(&kpatch_splat_lock);
			might_sleep();
		} else if (!in_nmi() && !irqs_disabled()) {
			raw_spin_lock(&kpatch_splat_lock);
			raw_spin_unlock(&kpatch_splat_lock);
			if (current->flags & PF_KTHREAD)
				(void)READ_ONCE(kpatch_a[kpatch_i]);
		}
	}
`

// mutateRequest returns kernel/unwind/deferred.c of s with splatMutation
// at the top of unwind_deferred_request().
func mutateRequest(t testing.TB, s *series.Series) map[string][]byte {
	t.Helper()
	const f = "kernel/unwind/deferred.c"
	src := string(s.FinalFiles()[f])
	const head = "int unwind_deferred_request(struct unwind_work *work, u64 *cookie)\n{\n"
	i := strings.Index(src, head)
	if i < 0 {
		t.Fatalf("%s has no %q", f, head)
	}
	j := i + len(head)
	// after the declarations of the function's first block
	k := strings.Index(src[j:], "\n\n")
	if k < 0 {
		t.Fatalf("%s: unwind_deferred_request() has no blank line after its declarations", f)
	}
	return map[string][]byte{f: []byte(src[:j+k+1] + "\n" + splatMutation + src[j+k+1:])}
}

// runDebug boots the debug kernel of s (with files replaced) under TCG.
func runDebug(t *testing.T, ctx context.Context, s *series.Series, files map[string][]byte) *Report {
	t.Helper()
	// A debug kernel is one more full kernel build (KASAN and lockdep
	// make it the slowest of them), beyond CI's time: it runs with the
	// other tests that build kernels in more configurations.
	if os.Getenv("KPATCH_BUILD_MATRIX") == "" {
		t.Skip("builds and boots a kernel with KASAN and lockdep (cold: a full build, 10-20 minutes on 2 cores): set KPATCH_BUILD_MATRIX=1 to run it")
	}
	dir := os.Getenv("KPATCH_TEST_DEBUG_BUILD_DIR")
	if dir == "" {
		var err error
		if dir, err = DefaultDebugBuildDir(); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Run(ctx, s, Options{
		BuildOptions: BuildOptions{BuildDir: dir, Log: testLog{t}, Debug: true, Files: files},
		Accel:        qemu.AccelTCG,
		BootTimeout:  10 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	t.Log("\n" + b.String())
	return rep
}

// saveConsole writes the run's console log and the programs' symbols to
// testdata/name when KPATCH_WRITE_TESTDATA is set, for the fast tests.
func saveConsole(t *testing.T, rep *Report, name string) {
	if os.Getenv("KPATCH_WRITE_TESTDATA") == "" {
		return
	}
	dir := filepath.Join("testdata", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	console, err := os.ReadFile(rep.ConsoleLog)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(console)
	w.Close()
	if err := os.WriteFile(filepath.Join(dir, "console.log.gz"), z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range Modes {
		out, err := exec.Command("nm", "-S", filepath.Join(rep.BuildDir, "progs", m.Program)).Output()
		if err != nil {
			t.Fatal(err)
		}
		var text []string // the functions: address, size, t or T, name
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) == 4 && (f[2] == "T" || f[2] == "t") {
				text = append(text, l)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, m.Program+".syms"), []byte(strings.Join(text, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestQEMUDebug boots v16 with the x86 series in a kernel with KASAN,
// PROVE_LOCKING and DEBUG_ATOMIC_SLEEP (testdata/debug-nmi). On Debian's
// 6.12 one report comes: in the nmi case, unwind_deferred_request() from
// the NMI calls task_work_add(), whose KASAN bookkeeping
// (__kasan_record_aux_stack) asks the stack depot to allocate, which
// warns in NMI context (lib/stackdepot.c). Every report must fail the case
// it came in, named, and no case may fail for another reason.
func TestQEMUDebug(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	tree := requireTools(t, ctx)
	s, err := seriestest.Generate(ctx, seriestest.Options{Tree: tree, Base: "v6.12", Version: bootRevision, Stack: bootStack, WithPrerequisite: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := runDebug(t, ctx, s, nil)
	saveConsole(t, rep, "debug-nmi")
	failedBy := map[string]string{}
	for _, sp := range rep.Splats {
		if sp.Case == "" {
			t.Errorf("%s: outside the cases", sp)
			continue
		}
		failedBy[sp.Mode+"/"+sp.Case] = sp.String()
	}
	for _, c := range rep.Cases {
		why, splat := failedBy[c.Mode+"/"+c.Name]
		switch {
		case splat && (c.Status != Fail || !strings.Contains(c.Reason, why)):
			t.Errorf("%s/%s: %s %q, want it failed by %s", c.Mode, c.Name, c.Status, c.Reason, why)
		case !splat && c.Status == Fail:
			t.Errorf("%s/%s failed without a splat: %s", c.Mode, c.Name, c.Reason)
		}
	}
	if rep.Passed != (len(rep.Splats) == 0) {
		t.Errorf("passed %v with %d splats", rep.Passed, len(rep.Splats))
	}
}

// TestQEMUDebugSplats boots the debug kernel with splatMutation in
// unwind_deferred_request(): lockdep's and might_sleep()'s reports fail
// timer_irq, where the request comes from the timer's interrupt, the KASAN
// report fails kthread_einval (testdata/debug-splats).
func TestQEMUDebugSplats(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	tree := requireTools(t, ctx)
	s, err := seriestest.Generate(ctx, seriestest.Options{Tree: tree, Base: "v6.12", Version: bootRevision, Stack: bootStack, WithPrerequisite: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := runDebug(t, ctx, s, mutateRequest(t, s))
	saveConsole(t, rep, "debug-splats")
	if rep.Passed {
		t.Fatal("the run passed with a KASAN, lockdep and might_sleep() report in unwind_deferred_request()")
	}
	checkSplatCases(t, rep.Cases, rep.Splats)
}

// checkSplatCases checks what the mutation's reports fail: timer_irq of
// the 64-bit task by lockdep and by might_sleep(), its kthread_einval by
// KASAN, each named in the case's reason; and that no case fails but
// those a report appeared in.
func checkSplatCases(t *testing.T, cases []CaseResult, splats []Splat) {
	t.Helper()
	want := map[string][]string{
		"unwind_x86_64/timer_irq":      {"lockdep report during unwind_x86_64 timer_irq", "inconsistent lock state", "BUG report during unwind_x86_64 timer_irq", "sleeping function called from invalid context"},
		"unwind_x86_64/kthread_einval": {"KASAN report during unwind_x86_64 kthread_einval", "stack-out-of-bounds in unwind_deferred_request"},
	}
	in := map[string]bool{}
	for _, s := range splats {
		in[s.Mode+"/"+s.Case] = true
	}
	for _, c := range cases {
		key := c.Mode + "/" + c.Name
		if c.Status == Fail && !in[key] {
			t.Errorf("%s failed without a report in it: %s", key, c.Reason)
		}
		w, ok := want[key]
		if !ok {
			continue
		}
		delete(want, key)
		if c.Status != Fail {
			t.Errorf("%s: %s, want a failure by the splat", key, c.Status)
		}
		for _, s := range w {
			if !strings.Contains(c.Reason, s) {
				t.Errorf("%s: reason %q lacks %q", key, c.Reason, s)
			}
		}
	}
	for k := range want {
		t.Errorf("no result for %s", k)
	}
}
