package verify

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"kpatch/verify/cunit"
)

// fileLines numbers the lines of b from first on.
func fileLines(b []byte, first int) []Line {
	var out []Line
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if i+1 >= first {
			out = append(out, Line{i + 1, l})
		}
	}
	return out
}

// unusedSeries is two patches: the first creates testdata/unused's
// foo.h and foo.c as include/linux/foo.h and drivers/misc/foo.c, the second
// appends a caller of foo_count() to foo.c (foo2.c).
func unusedSeries(t *testing.T) *Series {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/unused/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	h, c, c2 := read("foo.h"), read("foo.c"), read("foo2.c")
	p1 := &Patch{Number: 1, Subject: "foo: add the driver", Files: []*File{
		{Path: "include/linux/foo.h", Created: true, Known: true, New: h, Added: fileLines(h, 1)},
		{Path: "drivers/misc/foo.c", Created: true, Known: true, New: c, Added: fileLines(c, 1)},
	}}
	p2 := &Patch{Number: 2, Subject: "foo: count", Files: []*File{
		{Path: "drivers/misc/foo.c", Known: true, Old: c, New: c2, Added: fileLines(c2, strings.Count(string(c), "\n")+1)},
	}}
	s := &Series{Source: "unused", Patches: []*Patch{p1, p2}}
	s.index()
	return s
}

// TestUnusedStatic: UNUSED_STATIC is an error only where the build warns
// (a static, not inline, function or variable its file does not use); an
// unused static const object is UNUSED_CONST, a warning, since only W=1
// warns about it (a pointer to const is no const object); a
// use through module_init(), inside a kernel iterator loop, or in a
// definition cc/v4 cannot read counts; __maybe_unused silences it; an
// unused static inline of a header is advice naming the patch that first
// uses it; an unused macro is advice; the unreadable definition is
// reported once, with the reason.
func TestUnusedStatic(t *testing.T) {
	s := unusedSeries(t)
	fs := Run(s, Options{})
	var got []string
	for _, f := range fs {
		switch f.ID {
		case "UNUSED_STATIC", "UNUSED_CONST", "UNUSED_INLINE", "UNUSED_MACRO", "C_EVAL":
			line, _ := textAt(s, f)
			got = append(got, fmt.Sprintf("%d %s %s %s %q", f.Patch, f.Severity, f.ID, f.Where(), strings.TrimSpace(line)))
		}
	}
	sort.Strings(got)
	want := []string{
		`1 error UNUSED_STATIC drivers/misc/foo.c:15 "static int foo_unused_counter;"`,
		`1 error UNUSED_STATIC drivers/misc/foo.c:30 "static void foo_never_called(void)"`,
		`1 error UNUSED_STATIC drivers/misc/foo.c:94 "static const char *foo_unused_name = \"foo\";"`,
		`1 warning C_EVAL drivers/misc/foo.c:71 "static void foo_walk_unknown(struct foo_table *t)"`,
		`1 warning UNUSED_CONST drivers/misc/foo.c:92 "static const unsigned int foo_rtt_shift = 9;"`,
		`1 warning UNUSED_CONST drivers/misc/foo.c:93 "static const unsigned char foo_levels[] = { 1, 2, 3 };"`,
		`1 warning UNUSED_INLINE include/linux/foo.h:10 "static inline int foo_count(const struct foo_dev *fd)"`,
		`1 warning UNUSED_INLINE include/linux/foo.h:16 "static inline void foo_reset(struct foo_dev *fd)"`,
		`1 warning UNUSED_MACRO drivers/misc/foo.c:7 "#define FOO_UNUSED_MACRO(x) ((x) + 1)"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range fs {
		switch {
		case f.ID == "UNUSED_INLINE" && f.Line == 10 && !strings.Contains(f.Message, "introduced before use: patch 2 is the first to use it"):
			t.Errorf("foo_count(): %s", f.Message)
		case f.ID == "C_EVAL" && !strings.Contains(f.Message, "foo_walk_unknown() could not be parsed ("):
			t.Errorf("C_EVAL: %s", f.Message)
		}
	}
}

// TestSimilarBodies: two bodies are paired as a move by their lines only
// when there are enough of them to say so.
func TestSimilarBodies(t *testing.T) {
	body := func(lines ...string) []cunit.Line {
		var out []cunit.Line
		for i, l := range lines {
			out = append(out, cunit.Line{N: i + 1, Text: l})
		}
		return out
	}
	short := body("{", "\treturn 0;", "}")
	if got := similar(short, body("{", "\tx();", "\treturn 0;", "}")); got != 0 {
		t.Errorf("one-line body paired: %v", got)
	}
	long := body("{", "\tint a = f();", "\tg(a);", "\treturn a;", "}")
	if got := similar(long, body("{", "\tint a = f();", "\tg(a);", "\th();", "\treturn a;", "}")); got != 1 {
		t.Errorf("three-line body: %v, want 1", got)
	}
}
