package verify

import (
	"strings"
	"testing"

	"kpatch/plumbing/kernelsrc"
	"kpatch/verify/cunit"
)

// kernelFunc returns the definition of name in path at v6.12, with the
// comment block right above it, as the tree has them.
func kernelFunc(t *testing.T, path, start string) string {
	t.Helper()
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tree.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(c)
	i := strings.Index(text, "\n"+start)
	if i < 0 {
		t.Fatalf("%s: no %q", path, start)
	}
	j := strings.Index(text[i:], "\n}\n")
	k := strings.LastIndex(text[:i+1], "\n\n") // the comment above, if any
	return text[k+2 : i+j+3]
}

// TestNMIClaimsOnKernelCode: what says a function may run in NMI, read on
// 6.12's own functions. rcu_lockdep_current_cpu_online() returns when
// "in_nmi() || !rcu_scheduler_fully_active": in NMI it always returns, so
// the rest never runs there (it was read as "depends on more than
// in_nmi()": may run in NMI). A comment that says another function is
// NMI-safe (kgdboc's "uses irq_work_queue(), which is NMI-safe") is no
// evidence for the function below it (it was); tick_nohz_full_kick()'s
// "This kick, unlike tick_nohz_full_kick_cpu() ..., is NMI safe" still is.
func TestNMIClaimsOnKernelCode(t *testing.T) {
	kgdbocComment := "/*\n * To solve this the kgdboc trap exit code (the \"post_exception\" callback)\n * uses irq_work_queue(), which is NMI-safe, to schedule a callback from a\n * hardirq context.\n */\n"
	cases := []struct {
		name, src string
		nmi       bool
	}{
		{"in_nmi() || more, then return", kernelFunc(t, "kernel/rcu/tree.c", "bool rcu_lockdep_current_cpu_online(void)"), false},
		{"a comment about irq_work_queue()", kgdbocComment + kernelFunc(t, "drivers/tty/serial/kgdboc.c", "static void kgdboc_restore_input_helper("), false},
		{"a comment about this function", kernelFunc(t, "kernel/time/tick-sched.c", "static void tick_nohz_full_kick(void)"), true},
		{"in_nmi() && more, then return", "int f(void)\n{\n\tif (in_nmi() && !raw_spin_trylock(&l))\n\t\treturn -EBUSY;\n\treturn g();\n}", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "// SPDX-License-Identifier: GPL-2.0\n" + c.src + "\n"
			s := creationSeries(t, []string{"kernel/x.c"}, map[string][]byte{"kernel/x.c": []byte(src)})
			ch := testChecker(t, s, nmiRule)
			u := ch.unit("kernel/x.c", 1, cunit.After, cunit.Envs()[0])
			if u == nil || len(u.Funcs) != 1 {
				t.Fatalf("not read as one function: %+v", u)
			}
			if got := nmiEvidence(u.Funcs[0]); (got != "") != c.nmi {
				t.Errorf("may run in NMI: %q, want %v", got, c.nmi)
			}
		})
	}
}

// TestNMIStaticIsItsFilesOwn: a call of a static helper() is a call of
// the helper() of the caller's file, as the compiler resolves it: another
// file's static helper() that takes a mutex is not reached (an error
// before, exit 1 on valid code); an exported one is.
func TestNMIStaticIsItsFilesOwn(t *testing.T) {
	a := "// SPDX-License-Identifier: GPL-2.0\n#include <linux/nmi.h>\n\nstatic int helper(int x)\n{\n\treturn x + 1;\n}\n\n/* This may be called from NMI context. */\nint a_handler(int x)\n{\n\treturn helper(x);\n}\n"
	for _, c := range []struct {
		name, b string
		want    int
	}{
		{"other file's static", "// SPDX-License-Identifier: GPL-2.0\n#include <linux/mutex.h>\n\nstatic DEFINE_MUTEX(m);\n\nstatic int helper(int x)\n{\n\tmutex_lock(&m);\n\tmutex_unlock(&m);\n\treturn x;\n}\n\nint b_use(int x)\n{\n\treturn helper(x);\n}\n", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := creationSeries(t, []string{"kernel/a.c", "kernel/b.c"}, map[string][]byte{"kernel/a.c": []byte(a), "kernel/b.c": []byte(c.b)})
			got := only(Run(s, Options{}), "NMI_UNSAFE")
			if len(got) != c.want {
				t.Errorf("NMI_UNSAFE %v, want %d", got, c.want)
			}
		})
	}
	// the same helper exported by b.c, a declared in a.c: reached
	aExt := strings.Replace(a, "static int helper(int x)\n{\n\treturn x + 1;\n}\n", "int helper(int x);\n", 1)
	b := "// SPDX-License-Identifier: GPL-2.0\n#include <linux/mutex.h>\n#include <linux/nmi.h>\n\nstatic DEFINE_MUTEX(m);\n\nint helper(int x)\n{\n\tmutex_lock(&m);\n\tmutex_unlock(&m);\n\treturn x;\n}\n"
	s := creationSeries(t, []string{"kernel/a.c", "kernel/b.c"}, map[string][]byte{"kernel/a.c": []byte(aExt), "kernel/b.c": []byte(b)})
	if got := only(Run(s, Options{}), "NMI_UNSAFE"); len(got) == 0 {
		t.Error("no NMI_UNSAFE for an exported helper() that takes a mutex")
	}
}
