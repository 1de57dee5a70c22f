package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/verify/cunit"
)

// unitSeries is a one-patch series that creates testdata/cunit's files as
// include/linux/unit.h and kernel/unit.c.
func unitSeries(t *testing.T) *Series {
	t.Helper()
	p := &Patch{Number: 1, Subject: "unit"}
	for _, f := range []struct{ src, path string }{{"unit.h", "include/linux/unit.h"}, {"unit.c", "kernel/unit.c"}} {
		b, err := os.ReadFile("testdata/cunit/" + f.src)
		if err != nil {
			t.Fatal(err)
		}
		var added []Line
		for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			added = append(added, Line{i + 1, l})
		}
		p.Files = append(p.Files, &File{Path: f.path, Created: true, New: b, Known: true, Added: added})
	}
	s := &Series{Patches: []*Patch{p}}
	s.index()
	return s
}

func describeFunc(f *cunit.Func) string {
	var calls []string
	for _, r := range f.Calls {
		calls = append(calls, fmt.Sprintf("%s@%d", r.Name, r.Line))
	}
	var params []string
	for _, p := range f.Params {
		params = append(params, p.Type+" "+p.Name)
	}
	return fmt.Sprintf("%s:%d-%d static=%v inline=%v always=%v noinstr=%v (%s) calls %s",
		f.Name, f.Line, f.End, f.Static, f.Inline, f.AlwaysInline, f.Noinstr, strings.Join(params, ", "), strings.Join(calls, " "))
}

// TestUnit: cc/v4 reads the definitions of a file of the series with
// their storage class, kernel attributes, parameter types and calls at the
// file's own lines, per build; a definition it cannot parse is left out
// and recorded, and names used as types that nothing declares are made
// typedefs.
func TestUnit(t *testing.T) {
	s := unitSeries(t)
	c := testChecker(t, s, Rule{})
	for _, tc := range []struct {
		path  string
		env   cunit.Env
		funcs []string
		fail  []int // first lines of the definitions left out
	}{
		{"kernel/unit.c", cunit.Envs()[0], []string{
			"only64:5-8 static=true inline=false always=false noinstr=false () calls ",
			"leave:18-30 static=false inline=false always=false noinstr=true (struct task_struct * task, handle h, gfp_t gfp) calls instrumentation_begin@23 first@24 next@24 reset@25 instrumentation_end@26 note@28 reset@29",
		}, []int{32}},
		{"kernel/unit.c", cunit.Envs()[1], []string{
			"only32:10-13 static=true inline=false always=false noinstr=false () calls ",
			"leave:18-30 static=false inline=false always=false noinstr=true (struct task_struct * task, handle h, gfp_t gfp) calls instrumentation_begin@23 first@24 next@24 reset@25 instrumentation_end@26 note@28 reset@29",
		}, []int{32}},
		{"include/linux/unit.h", cunit.Envs()[0], []string{
			"reset:7-10 static=true inline=true always=true noinstr=false (struct thing * t) calls atomic_long_set@9",
		}, nil},
	} {
		t.Run(tc.path+"/"+tc.env.String(), func(t *testing.T) {
			u := c.unit(tc.path, 1, cunit.After, tc.env)
			if u == nil || u.Err != nil {
				t.Fatalf("unit: %+v", u)
			}
			var got []string
			for _, f := range u.Funcs {
				got = append(got, describeFunc(f))
			}
			if strings.Join(got, "\n") != strings.Join(tc.funcs, "\n") {
				t.Errorf("functions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.funcs, "\n"))
			}
			var fail []int
			for _, f := range u.Failed {
				fail = append(fail, f.Start)
			}
			if fmt.Sprint(fail) != fmt.Sprint(tc.fail) {
				t.Errorf("left out %v (%+v), want %v", fail, u.Failed, tc.fail)
			}
		})
	}
	// The region rules: in noinstr leave(), reset() runs between
	// instrumentation_begin() and _end(), note() after.
	u := c.unit("kernel/unit.c", 1, cunit.After, cunit.Envs()[0])
	leave := u.Funcs[1]
	for _, r := range leave.Calls {
		want := r.Line < 28 && r.Name != "instrumentation_begin"
		if got := leave.Instrumented(r.Line, r.Col); got != want {
			t.Errorf("%s() at line %d: instrumented %v, want %v", r.Name, r.Line, got, want)
		}
	}
	if p, ok := leave.Param("struct task_struct *"); !ok || p.Name != "task" {
		t.Errorf("task parameter: %+v %v", p, ok)
	}
	if !hasRef(leave.Idents, "current", 28) {
		t.Errorf("current at line 28 not among the identifiers: %+v", leave.Idents)
	}
	h := c.unit("include/linux/unit.h", 1, cunit.After, cunit.Envs()[0])
	if len(h.Macros) != 1 || h.Macros[0].Name != "for_each_thing" || h.Macros[0].Line != 5 || !strings.Contains(strings.Join(h.Macros[0].Idents, " "), "first") {
		t.Errorf("macros: %+v", h.Macros)
	}
}

func hasRef(rs []cunit.Ref, name string, line int) bool {
	for _, r := range rs {
		if r.Name == name && r.Line == line {
			return true
		}
	}
	return false
}

// TestNoinstrAccessUnit: an instrumented accessor reached through an
// __always_inline body from the non-instrumentable part of a noinstr
// function is reported once, at the accessor, with its raw form; the same
// body called between instrumentation_begin() and _end() is not.
func TestNoinstrAccessUnit(t *testing.T) {
	s := unitSeries(t)
	c := testChecker(t, s, noinstrAccessRule)
	checkNoinstrAccess(c)
	if len(c.out) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(c.out), c.out)
	}
	f := c.out[0]
	if f.File != "include/linux/unit.h" || f.Line != 9 || f.Patch != 1 ||
		!strings.Contains(f.Message, "leave() calls atomic_long_set(), through reset(),") ||
		!strings.Contains(f.Message, "use raw_atomic_long_set() there, or do that work between instrumentation_begin() and instrumentation_end()") ||
		!strings.Contains(f.Message, "in noinstr code") {
		t.Errorf("finding: %+v", f)
	}
}

// TestUnitFromHunk: an edit known only by its hunk (posted mail without the
// tree) is read from its added and removed lines at their line numbers:
// the definitions wholly in the hunk are cc/v4's, a line added into a
// function the hunk does not show is not, and X86_PREFIX reads the
// storage class of both sides.
func TestUnitFromHunk(t *testing.T) {
	lines := func(first int, text string) []Line {
		var out []Line
		for i, l := range strings.Split(text, "\n") {
			out = append(out, Line{first + i, l})
		}
		return out
	}
	f := &File{Path: "arch/x86/kernel/seg.c",
		Removed: lines(40, "static unsigned long seg_base(unsigned int seg)\n{\n\treturn 0;\n}"),
		Added:   append(lines(100, "unsigned long seg_base(unsigned int seg)\n{\n\treturn 0;\n}"), Line{200, "\tseg_base(1);"})}
	s := &Series{Patches: []*Patch{{Number: 1, Subject: "hunk", Files: []*File{f}}}}
	s.index()
	c := testChecker(t, s, Rules()[0])
	after := c.funcsAt(s.Patches[0], f.Path, cunit.After)
	before := c.funcsAt(s.Patches[0], f.Path, cunit.Before)
	if len(after) != 1 || after[0].Name != "seg_base" || after[0].Line != 100 || after[0].Static ||
		len(before) != 1 || before[0].Line != 40 || !before[0].Static {
		t.Fatalf("after %+v, before %+v", after, before)
	}
	c.rule = Rule{ID: "X86_PREFIX", Severity: Error}
	checkX86Prefix(c)
	if len(c.out) != 1 || c.out[0].Line != 100 || !strings.Contains(c.out[0].Message, "seg_base() is made global") {
		t.Errorf("X86_PREFIX: %+v", c.out)
	}
}

// TestInstrumentedAccess: the accessors KASAN/KCSAN instrument, with the
// form to use where they must not run.
func TestInstrumentedAccess(t *testing.T) {
	for _, c := range []struct {
		name, instead string
		ok            bool
	}{
		{"atomic_read", "raw_atomic_read()", true},
		{"atomic_long_try_cmpxchg", "raw_atomic_long_try_cmpxchg()", true},
		{"atomic64_set", "raw_atomic64_set()", true},
		{"try_cmpxchg", "raw_try_cmpxchg()", true},
		{"test_bit", "arch_test_bit()", true},
		{"__set_bit", "arch___set_bit()", true},
		{"test_and_clear_bit", "arch_test_and_clear_bit()", true},
		{"local64_set", "", true},
		{"instrument_atomic_read_write", "", true},
		{"kasan_check_write", "", true},
		{"kcsan_check_access", "", true},
		{"get_user", "", true},
		{"copy_from_user", "", true},
		{"raw_atomic_read", "", false},
		{"arch_test_bit", "", false},
		{"local_irq_save", "", false},
		{"local_clock", "", false},
		{"unwind_reset_info", "", false},
		{"READ_ONCE", "", false},
	} {
		instead, ok := instrumentedAccess(c.name)
		if instead != c.instead || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.name, instead, ok, c.instead, c.ok)
		}
	}
}

// TestUnitFromHunkContext: an edit known only by its hunk is read with the
// hunk's context lines, so a comment that opens on a context line does not
// make the added definition unreadable; a context #endif (whose #if is
// outside the hunk) and a context "}" closing an earlier definition are
// left out.
func TestUnitFromHunkContext(t *testing.T) {
	mbox := "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n" +
		"From: A U Thor <a@example.com>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\nSubject: [PATCH] x: add x_mode()\n\n" +
		"Add it.\n\nSigned-off-by: A U Thor <a@example.com>\n---\n" +
		"diff --git a/drivers/x.c b/drivers/x.c\nindex 1111111..2222222 100644\n--- a/drivers/x.c\n+++ b/drivers/x.c\n" +
		"@@ -10,5 +10,12 @@ int x_old(void)\n \treturn 0;\n }\n #endif\n /**\n+ * x_mode - the mode\n+ */\n+int x_mode(int m)\n+{\n+\treturn m;\n+}\n+\n  * x_next - the next\n"
	path := filepath.Join(t.TempDir(), "x.patch")
	if err := os.WriteFile(path, []byte(mbox), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadMail(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.index()
	c := testChecker(t, s, Rules()[0])
	fns := c.funcsAt(s.Patches[0], "drivers/x.c", cunit.After)
	u := c.unit("drivers/x.c", 1, cunit.After, cunit.Envs()[0])
	fnFailed := false // a context statement left out is not a definition
	for _, f := range u.Failed {
		fnFailed = fnFailed || f.Fn
	}
	if len(fns) != 1 || fns[0].Name != "x_mode" || fns[0].Line != 16 || u.Err != nil || fnFailed {
		t.Errorf("functions %+v, unit error %v, left out %+v", fns, u.Err, u.Failed)
	}
}
