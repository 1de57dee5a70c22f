package linux_test

import (
	"strings"
	"testing"

	"kpatch/spec"
	"kpatch/templates/linux"
)

// TestX86619FactsFollowTheCode renders the x86-6.19 stack after each of
// its patches and checks that its facts say what its code does: the
// walker's (frame pointer unwinding once x86's unwind_user.h exists;
// compat tasks by word size once it gives 4 for them; the CFA aligned to
// the word size once user.c checks state->ws; the start-of-function rule
// once user.c asks unwind_user_at_function_start(); compat deferral never
// refused), the x86_64 configurations' (the unwinder selected once x86
// has it), and the self-test's (TWA_NMI_CURRENT once deferred.c queues
// with it).
func TestX86619FactsFollowTheCode(t *testing.T) {
	s, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Stack("x86-6.19", 0)
	if err != nil {
		t.Fatal(err)
	}
	render := func(path string, step int) string {
		c, ok, err := r.Render(path, step)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return ""
		}
		return string(c)
	}
	seen := map[string]bool{}
	for step := r.Own; step <= len(r.Patches); step++ {
		w, err := r.Facts("walker", step)
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.Facts("configs", step)
		if err != nil {
			t.Fatal(err)
		}
		st, err := r.Facts("selftest", step)
		if err != nil {
			t.Fatal(err)
		}
		x86 := render("arch/x86/include/asm/unwind_user.h", step)
		user := render("kernel/unwind/user.c", step)
		deferred := render("kernel/unwind/deferred.c", step)
		checks := []struct {
			what       string
			code, fact bool
		}{
			{"fp: x86_64", x86 != "", w["fp"] == "x86_64"},
			{"compat-fp: word-size", strings.Contains(x86, "return sizeof(int);"), w["compat-fp"] == "word-size"},
			{"align: word-size", strings.Contains(user, "cfa & (state->ws - 1)"), w["align"] == "word-size"},
			{"function-start: uprobe", strings.Contains(user, "unwind_user_at_function_start(regs)") && strings.Contains(x86, "is_uprobe_at_func_entry"), w["function-start"] == "uprobe"},
			{"x86_64 selects the unwinder", x86 != "", strings.Contains(c["x86_64"], "HAVE_UNWIND_USER_FP=y") && strings.Contains(c["x86_64-noia32"], "HAVE_UNWIND_USER_FP=y")},
			{"nmi-request: twa-nmi-current", strings.Contains(deferred, "twa_mode = TWA_NMI_CURRENT;"), st["nmi-request"] == "twa-nmi-current"},
		}
		for _, ch := range checks {
			if ch.code != ch.fact {
				t.Errorf("after patch %d (%s): the code has %s: %v, the facts: %v", step, r.Patches[step-1].ID, ch.what, ch.code, ch.fact)
			}
			if ch.code {
				seen[ch.what] = true
			}
		}
		if _, ok := w["compat-deferral"]; ok {
			t.Errorf("after patch %d: compat deferral refused, 6.19 unwinds compat tasks", step)
		}
		if _, ok := w["segment-bases"]; ok {
			t.Errorf("after patch %d: segment bases, 6.19 has none", step)
		}
	}
	if len(seen) != 6 {
		t.Errorf("only %d of the 6 properties show at the end: %v", len(seen), seen)
	}
}
