package buildtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/templates/linux"
)

// These tests build kernels: each configuration's base once (a full
// tinyconfig build, kept in <cache>/build/matrix-<config> and shared with
// kpatch test --build), then the patches they need. Objects whose
// inputs were compiled before are not compiled again, so after the first
// run only the mutated objects are.

// mutate writes the built-in series description to a temporary directory
// and replaces, in file (relative to it), old by new, which must occur
// exactly once.
func mutate(t *testing.T, edits ...[3]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "spec")
	if err := linux.Export(dir); err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		p := filepath.Join(dir, e[0])
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), e[1]); n != 1 {
			t.Fatalf("%s: %q occurs %d times, want once", e[0], e[1], n)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(b), e[1], e[2], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runMatrix(t *testing.T, specDir string, from, patches int, configs ...string) *Report {
	t.Helper()
	testenv.Full(t, "builds kernels, cold a full tinyconfig build per configuration and per patch that touches a widely included header")
	// Cold, the mutation tests take several full kernel builds per
	// configuration (half an hour and more on 2 cores), too much for the
	// default test run; they run when asked.
	if os.Getenv("KPATCH_BUILD_MATRIX") == "" {
		t.Skip("builds kernels in three configurations (cold: half an hour and more on 2 cores): set KPATCH_BUILD_MATRIX=1 to run it")
	}
	s, _ := v11(t, specDir)
	rep, err := Run(context.Background(), s, Options{
		Configs: configs, From: from, Patches: patches, Jobs: 2, Log: testWriter{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Logf("report:\n%s", b.String())
	return rep
}

// sparseRan reports whether the run used sparse (C=1): then v11's patch 2
// has a real new warning in x86_64 (get_user() on a pointer without
// __user, which patch 3 rewrites).
func sparseRan(rep *Report) bool {
	for _, f := range rep.Flags {
		if f == "C=1" {
			return true
		}
	}
	return false
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	if w.t == nil {
		return os.Stderr.Write(p)
	}
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// statuses returns the column of config as "PASS PASS FAIL ...".
func statuses(rep *Report, config string) string {
	for _, c := range rep.Configs {
		if c.Name == config {
			var s []string
			for _, cell := range c.Cells {
				s = append(s, cell.Status)
			}
			return strings.Join(s, " ")
		}
	}
	return "no column " + config
}

func cell(t *testing.T, rep *Report, config string, patch int) Cell {
	t.Helper()
	for _, c := range rep.Configs {
		if c.Name == config {
			if patch < 1 || patch > len(c.Cells) {
				t.Fatalf("%s has no patch %d", config, patch)
			}
			return c.Cells[patch-1]
		}
	}
	t.Fatalf("no column %s", config)
	return Cell{}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func want(parts ...[]string) string {
	var all []string
	for _, p := range parts {
		all = append(all, p...)
	}
	return strings.Join(all, " ")
}

// A stub removed from the #else branch of unwind_deferred.h: kernel/fork.c
// calls unwind_task_init() from patch 4 on, so i386 (where UNWIND_USER is
// never on) fails at patch 4, and patches 1-3 build.
func TestMutationMissingStub(t *testing.T) {
	spec := mutate(t, [3]string{"files/include/linux/unwind_deferred.h.tmpl",
		"static inline void unwind_task_init(struct task_struct *task) {}\n", ""})
	rep := runMatrix(t, spec, 0, 4, "i386")
	if got, w := statuses(rep, "i386"), want(repeat(Pass, 3), []string{Fail}); got != w {
		t.Fatalf("i386: %s, want %s", got, w)
	}
	c := cell(t, rep, "i386", 4)
	e := c.Errors[0]
	if e.File != "kernel/fork.c" || !strings.Contains(e.Message, "unwind_task_init") || e.Origin.Patch != 4 ||
		!strings.HasPrefix(e.Origin.Source, "v11/faultable.patch:") || e.Since != 4 {
		t.Errorf("patch 4 error: %+v, want kernel/fork.c: ... unwind_task_init from an edit of patch 4", e)
	}
	if rep.Passed {
		t.Errorf("report passed with a failure")
	}
}

// compat_fp_state() moved from patch 3 to patch 6 while patch 3's
// unwind_user_next() calls it: patch 3 fails in x86_64 (where
// kernel/unwind/user.c is compiled from patch 1), blamed on patch 3's
// template line; patch 6, which now brings the function, builds.
// (Patches 4 and 5, which would fail the same way, are not built here:
// each rebuilds every object that includes <linux/sched.h>.)
func TestMutationCallBeforeDefinition(t *testing.T) {
	fn := "static inline bool compat_fp_state(struct unwind_user_state *state)\n{\n\treturn IS_ENABLED(CONFIG_HAVE_UNWIND_USER_COMPAT_FP) &&\n\t       state->type == UNWIND_USER_TYPE_COMPAT_FP;\n}\n\n"
	spec := mutate(t, [3]string{"files/kernel/unwind/user.c.tmpl",
		"{{if since \"compat-fp\"}}\n" + fn, "{{if and (lt .Version 14) (since \"deferred\")}}\n" + fn + "{{end}}\n{{if since \"compat-fp\"}}\n"})
	rep := runMatrix(t, spec, 0, 3, "x86_64")
	p2 := Pass
	if sparseRan(rep) {
		p2 = Warn
	}
	if got, w := statuses(rep, "x86_64"), want([]string{Pass, p2, Fail}); got != w {
		t.Fatalf("x86_64: %s, want %s", got, w)
	}
	e := cell(t, rep, "x86_64", 3).Errors[0]
	if e.File != "kernel/unwind/user.c" || !strings.Contains(e.Message, "compat_fp_state") || e.Since != 3 ||
		e.Origin.Patch != 3 || !strings.HasPrefix(e.Origin.Source, "files/kernel/unwind/user.c.tmpl:") {
		t.Errorf("patch 3: error %+v, want kernel/unwind/user.c: compat_fp_state, line from patch 3's template", e)
	}
	rep = runMatrix(t, spec, 6, 6, "x86_64")
	if c := cell(t, rep, "x86_64", 6); c.Status == Fail {
		t.Errorf("patch 6 fails: %+v", c.Errors)
	}
}

// An unused static function added by patch 2: a new W=1 warning there,
// attributed to the template line, and still there at patch 3.
func TestMutationUnusedFunction(t *testing.T) {
	spec := mutate(t, [3]string{"files/kernel/unwind/user.c.tmpl",
		"{{if and (lt .Version 14) (since \"fp\")}}\nstatic inline bool fp_state(",
		"{{if and (lt .Version 14) (since \"fp\")}}\nstatic int kpatch_unused(void)\n{\n\treturn 0;\n}\n\nstatic inline bool fp_state("})
	rep := runMatrix(t, spec, 0, 3, "x86_64")
	if got, w := statuses(rep, "x86_64"), want([]string{Pass}, repeat(Warn, 2)); got != w {
		t.Fatalf("x86_64: %s, want %s", got, w)
	}
	for k := 2; k <= 3; k++ {
		var found *Problem
		for _, w := range cell(t, rep, "x86_64", k).Warnings {
			if strings.Contains(w.Message, "kpatch_unused") {
				found = &w
			}
		}
		if found == nil {
			t.Fatalf("patch %d: no warning about kpatch_unused", k)
		}
		if found.File != "kernel/unwind/user.c" || found.Origin.Patch != 2 || found.Since != 2 ||
			!strings.HasPrefix(found.Origin.Source, "files/kernel/unwind/user.c.tmpl:") {
			t.Errorf("patch %d warning %+v, want one from patch 2's template line", k, *found)
		}
	}
	if !rep.Passed || !rep.Warned {
		t.Errorf("passed=%v warned=%v, want a pass with warnings", rep.Passed, rep.Warned)
	}
}

// The IA32-only part of struct unwind_user_state used outside
// CONFIG_IA32_EMULATION by patch 14: x86_64 builds, x86_64-noia32 fails.
// Patches 1-13 are applied but not built (From 14), so that this costs
// one build of what the whole series affects per configuration.
func TestMutationCompatOutsideCompat(t *testing.T) {
	spec := mutate(t, [3]string{"files/arch/x86/include/asm/unwind_user.h.tmpl",
		"#endif /* CONFIG_IA32_EMULATION */\n",
		"#endif /* CONFIG_IA32_EMULATION */\n\nstatic inline unsigned long arch_unwind_cs_base(struct unwind_user_state *state)\n{\n\treturn state->arch.cs_base;\n}\n"})
	rep := runMatrix(t, spec, 14, 14, "x86_64", "x86_64-noia32")
	if c := cell(t, rep, "x86_64", 14); c.Status == Fail {
		t.Errorf("x86_64 fails at patch 14: %+v", c.Errors)
	}
	c := cell(t, rep, "x86_64-noia32", 14)
	if c.Status != Fail {
		t.Fatalf("x86_64-noia32 at patch 14: %s, want FAIL", c.Status)
	}
	e := c.Errors[0]
	if e.File != "arch/x86/include/asm/unwind_user.h" || e.Origin.Patch != 14 || !strings.HasPrefix(e.Origin.Source, "files/arch/x86/include/asm/unwind_user.h.tmpl:") {
		t.Errorf("patch 14 error %+v", e)
	}
}
