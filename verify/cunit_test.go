package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func describeFunc(f *cFunc) string {
	var calls []string
	for _, r := range f.calls {
		calls = append(calls, fmt.Sprintf("%s@%d", r.name, r.line))
	}
	var params []string
	for _, p := range f.params {
		params = append(params, p.typ+" "+p.name)
	}
	return fmt.Sprintf("%s:%d-%d static=%v inline=%v always=%v noinstr=%v (%s) calls %s",
		f.name, f.line, f.end, f.static, f.inline, f.alwaysInline, f.noinstr, strings.Join(params, ", "), strings.Join(calls, " "))
}

// TestUnit: cc/v4 reads the definitions of a file of the series with
// their storage class, kernel attributes, parameter types and calls at the
// file's own lines, per build; a definition it cannot parse is left out
// and recorded, and names used as types that nothing declares are made
// typedefs.
func TestUnit(t *testing.T) {
	s := unitSeries(t)
	c := &checker{s: s, units: newUnitCache()}
	for _, tc := range []struct {
		path  string
		env   cenv
		funcs []string
		fail  []int // first lines of the definitions left out
	}{
		{"kernel/unit.c", envs()[0], []string{
			"only64:5-8 static=true inline=false always=false noinstr=false () calls ",
			"leave:18-30 static=false inline=false always=false noinstr=true (struct task_struct * task, handle h, gfp_t gfp) calls instrumentation_begin@23 first@24 next@24 reset@25 instrumentation_end@26 note@28 reset@29",
		}, []int{32}},
		{"kernel/unit.c", envs()[1], []string{
			"only32:10-13 static=true inline=false always=false noinstr=false () calls ",
			"leave:18-30 static=false inline=false always=false noinstr=true (struct task_struct * task, handle h, gfp_t gfp) calls instrumentation_begin@23 first@24 next@24 reset@25 instrumentation_end@26 note@28 reset@29",
		}, []int{32}},
		{"include/linux/unit.h", envs()[0], []string{
			"reset:7-10 static=true inline=true always=true noinstr=false (struct thing * t) calls atomic_long_set@9",
		}, nil},
	} {
		t.Run(tc.path+"/"+tc.env.String(), func(t *testing.T) {
			u := c.unit(tc.path, 1, afterPatch, tc.env)
			if u == nil || u.err != nil {
				t.Fatalf("unit: %+v", u)
			}
			var got []string
			for _, f := range u.funcs {
				got = append(got, describeFunc(f))
			}
			if strings.Join(got, "\n") != strings.Join(tc.funcs, "\n") {
				t.Errorf("functions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.funcs, "\n"))
			}
			var fail []int
			for _, f := range u.failed {
				fail = append(fail, f.start)
			}
			if fmt.Sprint(fail) != fmt.Sprint(tc.fail) {
				t.Errorf("left out %v (%+v), want %v", fail, u.failed, tc.fail)
			}
		})
	}
	// The region rules: in noinstr leave(), reset() runs between
	// instrumentation_begin() and _end(), note() after.
	u := c.unit("kernel/unit.c", 1, afterPatch, envs()[0])
	leave := u.funcs[1]
	for _, r := range leave.calls {
		want := r.line < 28 && r.name != "instrumentation_begin"
		if got := leave.instrumented(r.line, r.col); got != want {
			t.Errorf("%s() at line %d: instrumented %v, want %v", r.name, r.line, got, want)
		}
	}
	if p, ok := leave.param("struct task_struct *"); !ok || p.name != "task" {
		t.Errorf("task parameter: %+v %v", p, ok)
	}
	if !hasRef(leave.idents, "current", 28) {
		t.Errorf("current at line 28 not among the identifiers: %+v", leave.idents)
	}
	h := c.unit("include/linux/unit.h", 1, afterPatch, envs()[0])
	if len(h.macros) != 1 || h.macros[0].name != "for_each_thing" || h.macros[0].line != 5 || !strings.Contains(strings.Join(h.macros[0].idents, " "), "first") {
		t.Errorf("macros: %+v", h.macros)
	}
}

func hasRef(rs []cRef, name string, line int) bool {
	for _, r := range rs {
		if r.name == name && r.line == line {
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
	c := &checker{s: s, units: newUnitCache(), rule: noinstrAccessRule, seen: map[string]bool{}, ignore: map[string]bool{}}
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
	c := &checker{s: s, units: newUnitCache(), rule: Rules()[0], seen: map[string]bool{}, ignore: map[string]bool{}}
	after := c.funcsAt(s.Patches[0], f.Path, afterPatch)
	before := c.funcsAt(s.Patches[0], f.Path, beforePatch)
	if len(after) != 1 || after[0].name != "seg_base" || after[0].line != 100 || after[0].static ||
		len(before) != 1 || before[0].line != 40 || !before[0].static {
		t.Fatalf("after %+v, before %+v", after, before)
	}
	c.rule = Rule{ID: "X86_PREFIX", Severity: Error}
	checkX86Prefix(c)
	if len(c.out) != 1 || c.out[0].Line != 100 || !strings.Contains(c.out[0].Message, "seg_base() is made global") {
		t.Errorf("X86_PREFIX: %+v", c.out)
	}
}

// TestCChunks: the lexical split hands cc/v4 whole definitions: braces in
// comments, strings and preprocessor lines do not count, a struct is not a
// function, and a function's name is the one before its parameters.
func TestCChunks(t *testing.T) {
	src := "#define X(a) { a }\n/* { */\nstruct s {\n\tint a; // }\n};\ntypedef int t_t;\n" +
		"static noinstr void f(const char *s)\n{\n\tg(\"}\", '{');\n}\nint v = 1;\n"
	var got []string
	for _, ch := range cChunks([]byte(src)) {
		got = append(got, fmt.Sprintf("%d-%d fn=%v typedef=%v brace=%v %s", ch.startLine, ch.endLine, ch.fn, ch.typedef, ch.brace, ch.name))
	}
	want := []string{
		"3-5 fn=false typedef=false brace=true ",
		"6-6 fn=false typedef=true brace=false ",
		"7-10 fn=true typedef=false brace=true f",
		"11-11 fn=false typedef=false brace=false ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("chunks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Blanking keeps the lines and the preprocessor lines.
	b := blankExcept([]byte(src), nil)
	if strings.Count(string(b), "\n") != strings.Count(src, "\n") || !strings.HasPrefix(string(b), "#define X(a) { a }\n") ||
		strings.Contains(string(b), "struct") {
		t.Errorf("blankExcept: %q", b)
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
	c := &checker{s: s, units: newUnitCache(), rule: Rules()[0], seen: map[string]bool{}, ignore: map[string]bool{}}
	fns := c.funcsAt(s.Patches[0], "drivers/x.c", afterPatch)
	u := c.unit("drivers/x.c", 1, afterPatch, envs()[0])
	fnFailed := false // a context statement left out is not a definition
	for _, f := range u.failed {
		fnFailed = fnFailed || f.fn
	}
	if len(fns) != 1 || fns[0].name != "x_mode" || fns[0].line != 16 || u.err != nil || fnFailed {
		t.Errorf("functions %+v, unit error %v, left out %+v", fns, u.err, u.failed)
	}
}
