package boottest

import (
	"path/filepath"
	"strings"
	"testing"
)

// The splat detection on consoles of real boots (testdata/debug-*,
// written by TestQEMUDebug and TestQEMUDebugSplats with
// KPATCH_WRITE_TESTDATA=1): v16 with the x86 series on Debian's 6.12 in
// the debug kernel (KASAN, PROVE_LOCKING, DEBUG_ATOMIC_SLEEP), as it is
// and with splatMutation in unwind_deferred_request().
func TestSplatsOnRealConsoles(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want []string // Splat.String() prefixes, in order
	}{
		// task_work_add() from the NMI case: KASAN's record of the work
		// asks the stack depot to allocate in NMI context.
		{"debug-nmi", []string{"WARNING report during unwind_x86_64 nmi (console line 1280): WARNING: CPU: 0 PID: 17 at lib/stackdepot.c:635 stack_depot_save_flags"}},
		{"debug-splats", []string{
			"lockdep report during unwind_x86_64 timer_irq",
			"BUG report during unwind_x86_64 timer_irq",
			"WARNING report during unwind_x86_64 nmi",
			"KASAN report during unwind_x86_64 kthread_einval",
		}},
		// The boots of the other tests, in kernels without the debug
		// checks: nothing.
		{"pass", nil},
		{"stack-x86", nil},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			got := Splats(readGz(t, filepath.Join(tc.dir, "console.log.gz")))
			if len(got) != len(tc.want) {
				t.Fatalf("%d splats, want %d: %v", len(got), len(tc.want), got)
			}
			for i, s := range got {
				if !strings.HasPrefix(s.String(), tc.want[i]) {
					t.Errorf("splat %d: %s, want %s...", i, s, tc.want[i])
				}
			}
		})
	}
}

// The mutated debug boot checked as test qemu checks it: the cases the
// reports appeared in fail, named; every other case passes.
func TestCheckDebugSplats(t *testing.T) {
	console := readGz(t, filepath.Join("debug-splats", "console.log.gz"))
	a := CheckRevision(console, testSyms(t, "debug-splats"), savedCases(), walkerX86(t), expectationsX86())
	checkSplatCases(t, a.Cases, a.Splats)
	if len(a.Problems) > 0 {
		t.Errorf("run-level problems: %q", a.Problems)
	}
}
