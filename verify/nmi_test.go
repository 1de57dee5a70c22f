package verify

import (
	"strings"
	"testing"

	"kpatch/verify/cunit"
)

// nmiFiles are files of Debian's 6.12 with code that runs in NMI, or
// tells NMI apart: the NMI handlers, irq_work, stack depot, printk's NMI
// paths, the perf callchain, trace clocks, BPF's NMI-safe maps.
var nmiFiles = []string{"kernel/printk/printk_safe.c", "kernel/trace/trace_clock.c", "kernel/bpf/percpu_freelist.c",
	"kernel/events/callchain.c", "kernel/irq_work.c", "arch/x86/kernel/nmi.c", "lib/stackdepot.c", "kernel/watchdog.c",
	"lib/genalloc.c", "kernel/panic.c"}

var nmiFilesFull = []string{"kernel/bpf/queue_stack_maps.c", "kernel/trace/trace_stack.c", "kernel/bpf/ringbuf.c",
	"kernel/irq/chip.c", "kernel/kcov.c", "kernel/time/tick-sched.c", "kernel/rcu/srcutree.c",
	"kernel/time/timekeeping.c", "kernel/bpf/helpers.c", "kernel/printk/printk.c", "kernel/trace/ring_buffer.c",
	"lib/llist.c", "kernel/context_tracking.c"}

// TestNMIKernelCode: the kernel's own code that runs in NMI, each file
// created by a patch: NMI_UNSAFE reports nothing (the kernel's NMI paths
// take raw locks with trylock, defer to irq_work, allocate nothing), and
// the check did run: functions the code says may run in NMI were found
// and their calls followed. The fast tier reads 10 files, the full tier 23.
func TestNMIKernelCode(t *testing.T) {
	tree := debianTree(t)
	files := nmiFiles
	if !testing.Short() {
		files = append(append([]string(nil), nmiFiles...), nmiFilesFull...)
	}
	s := creationSeries(t, files, treeFiles(t, tree, files))
	fs := Run(s, Options{})
	for _, f := range only(fs, "NMI_UNSAFE") {
		t.Errorf("on the kernel's own code: %s: %s", f.Where(), f.Message)
	}
	c := testChecker(t, s, nmiRule)
	roots := 0
	for i, p := range files {
		u := c.unit(p, i+1, cunit.After, cunit.Envs()[0])
		if u == nil {
			t.Fatalf("%s not read", p)
		}
		for _, fn := range u.Funcs {
			if why := nmiEvidence(fn); why != "" {
				roots++
				t.Logf("%s: %s(): %s", p, fn.Name, why)
			}
		}
	}
	if want := map[bool]int{true: 1, false: 5}[testing.Short()]; roots < want {
		t.Errorf("only %d functions found that may run in NMI: the check tests little", roots)
	}
}

// TestNMIEvidence: what says a function may run in NMI, and what does
// not, on the forms the kernel writes.
func TestNMIEvidence(t *testing.T) {
	for _, c := range []struct {
		body string
		nmi  bool
	}{
		{"int f(void)\n{\n\tif (WARN_ON_ONCE(!CAN_USE_IN_NMI && in_nmi()))\n\t\treturn -EINVAL;\n\treturn g();\n}", true},
		{"int f(void)\n{\n\tif (!CAN_USE_IN_NMI && in_nmi())\n\t\treturn -EINVAL;\n\treturn g();\n}", true},
		{"int f(void)\n{\n\tif (WARN_ON_ONCE(in_nmi()))\n\t\treturn -EINVAL;\n\treturn g();\n}", false},
		{"int f(void)\n{\n\tif (in_nmi())\n\t\treturn -EBUSY;\n\treturn g();\n}", false},
		{"void f(void)\n{\n\tWARN_ON(in_nmi());\n\tg();\n}", false},
		{"void f(void)\n{\n\tif (in_nmi()) {\n\t\th();\n\t\treturn;\n\t}\n\tg();\n}", false},
		{"/* This may be called from NMI context. */\nvoid f(void)\n{\n\tg();\n}", true},
		{"/* This must not be called from NMI context. */\nvoid f(void)\n{\n\tg();\n}", false},
		{"void f(void)\n{\n\t/* NMI requires having safe cmpxchg operations */\n\tg();\n}", true},
	} {
		src := "// SPDX-License-Identifier: GPL-2.0\n" + c.body + "\n"
		s := creationSeries(t, []string{"kernel/x.c"}, map[string][]byte{"kernel/x.c": []byte(src)})
		ch := testChecker(t, s, nmiRule)
		u := ch.unit("kernel/x.c", 1, cunit.After, cunit.Envs()[0])
		if u == nil || len(u.Funcs) != 1 {
			t.Fatalf("%q: %+v", c.body, u)
		}
		if got := nmiEvidence(u.Funcs[0]) != ""; got != c.nmi {
			t.Errorf("%q: may run in NMI %v, want %v (%s)", strings.ReplaceAll(c.body, "\n", " "), got, c.nmi, nmiEvidence(u.Funcs[0]))
		}
	}
}
