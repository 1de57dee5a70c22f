package standin

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/plumbing/kbuild"
	"kpatch/spec"
	"kpatch/templates/linux"
)

func revision(t *testing.T, v int) *spec.Revision {
	t.Helper()
	s, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Revision(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNeeds: of the built-in series only v14, from its srcu patch on, uses
// something of its base that Linux 6.12 lacks (srcu_read_lock_lite, v6.13).
func TestNeeds(t *testing.T) {
	for _, tc := range []struct {
		v      int
		step   int // -1: the last patch
		symbol string
	}{
		{11, -1, ""}, {12, -1, ""}, {13, -1, ""},
		{14, -1, "srcu_read_lock_lite"},
		{14, 1, ""},
		{15, -1, ""}, {16, -1, ""},
	} {
		r := revision(t, tc.v)
		step := tc.step
		if step < 0 {
			step = len(r.Patches)
		}
		needs, err := Needs(r, step)
		if err != nil {
			t.Fatalf("v%d after %d: %v", tc.v, step, err)
		}
		var got []string
		for _, n := range needs {
			got = append(got, n.Symbol)
		}
		if strings.Join(got, " ") != tc.symbol {
			t.Errorf("v%d after patch %d needs %q, want %q", tc.v, step, got, tc.symbol)
		}
	}
}

// TestApplyOnDebian612: the Debian 6.12 tree's srcu.h lacks
// srcu_read_lock_lite, so v14 gets the stand-in at the top of the series'
// srcu.h; a base that declares it (the same header with the declaration
// v6.13 added) gets none and the files are left as they were. gcc then
// preprocesses the stand-in'd guard into calls of srcu_read_lock().
func TestApplyOnDebian612(t *testing.T) {
	tree := testenv.KernelTree(t)
	r := revision(t, 14)
	step := len(r.Patches)
	base := kbuild.GitBaseFile(context.Background(), tree, "v6.12")
	srcu, ok, err := base("include/linux/srcu.h")
	if err != nil || !ok {
		t.Fatalf("srcu.h of v6.12: %v %v", ok, err)
	}
	series := append(append([]byte{}, srcu...), "DEFINE_LOCK_GUARD_1(srcu_lite, struct srcu_struct,\n\t_T->idx = srcu_read_lock_lite(_T->lock),\n\tsrcu_read_unlock_lite(_T->lock, _T->idx),\n\tint idx)\n"...)

	files := map[string][]byte{"include/linux/srcu.h": series}
	used, err := Apply(r, step, files, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(used) != 1 || used[0].Symbol != "srcu_read_lock_lite" {
		t.Fatalf("used %v, want the srcu_read_lock_lite stand-in", used)
	}
	got := files["include/linux/srcu.h"]
	if !bytes.HasPrefix(got, Block(used[0])) || !bytes.HasSuffix(got, series) {
		t.Fatalf("srcu.h is not the stand-in followed by the series' header:\n%.400s", got)
	}
	if s := used[0].String(); !strings.Contains(s, "v6.13") || !strings.Contains(s, "srcu_read_lock_lite as srcu_read_lock") {
		t.Errorf("message %q does not say what was defined and why", s)
	}

	// gcc: the guard's lock and unlock expand to the full SRCU calls.
	gcc := testenv.Tool(t, "gcc", "gcc")
	src := filepath.Join(t.TempDir(), "guard.c")
	body := string(Block(used[0])) + "int f(struct srcu_struct *s) { int i = srcu_read_lock_lite(s); srcu_read_unlock_lite(s, i); return i; }\n"
	if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gcc, "-E", "-P", src).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc -E: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "srcu_read_lock(s)") || !strings.Contains(string(out), "srcu_read_unlock(s, i)") || strings.Contains(string(out), "_lite(") {
		t.Errorf("gcc -E gives\n%s\nwant the full SRCU calls", out)
	}

	// A base that has it: nothing is added.
	newer := func(p string) ([]byte, bool, error) {
		if p == "include/linux/srcu.h" {
			return append(append([]byte{}, srcu...), "static inline int srcu_read_lock_lite(struct srcu_struct *ssp);\n"...), true, nil
		}
		return base(p)
	}
	files = map[string][]byte{"include/linux/srcu.h": series}
	used, err = Apply(r, step, files, newer)
	if err != nil {
		t.Fatal(err)
	}
	if len(used) != 0 || !bytes.Equal(files["include/linux/srcu.h"], series) {
		t.Errorf("on a base with srcu_read_lock_lite: used %v, header changed %v", used, !bytes.Equal(files["include/linux/srcu.h"], series))
	}
}

// TestValidDefine: a stand-in is an identifier for an identifier or a
// function-like macro for a blank-free expression; anything else (a
// statement, unbalanced parentheses, an expression for a plain name) is
// refused before it reaches a header.
func TestValidDefine(t *testing.T) {
	for _, tc := range []struct {
		name, repl string
		ok         bool
	}{
		{"srcu_read_lock_lite", "srcu_read_lock", true},
		{"f(a,b)", "g((a),0,(b))", true},
		{"f()", "g()", true},
		{"f", "g(1)", false},
		{"f(a,b)", "g((a)", false},
		{"f(a,b)", "g(a);h(b)", false},
		{"f(a,,b)", "g(a)", false},
		{"f(a)", "", false},
		{"1f(a)", "g(a)", false},
	} {
		if got := validDefine(tc.name, tc.repl); got != tc.ok {
			t.Errorf("validDefine(%q, %q) = %v, want %v", tc.name, tc.repl, got, tc.ok)
		}
	}
}

// TestPerfHeaderInitIDOnDebian612: the x86 part as 6.19 merged it calls
// perf_event_header__init_id(), which Linux 6.12 lacks; its stand-in at
// the top of the base's perf_event.h makes gcc read the call as 6.12's
// perf_event_header__init() given the header's own type, misc and size.
func TestPerfHeaderInitIDOnDebian612(t *testing.T) {
	tree := testenv.KernelTree(t)
	s, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Stack("x86-6.19", 0)
	if err != nil {
		t.Fatal(err)
	}
	step := len(r.Patches)
	base := kbuild.GitBaseFile(context.Background(), tree, "v6.12")
	files := map[string][]byte{}
	used, err := Apply(r, step, files, base)
	if err != nil {
		t.Fatal(err)
	}
	var syms []string
	for _, n := range used {
		syms = append(syms, n.Symbol)
	}
	if strings.Join(syms, " ") != "perf_event_header__init_id" {
		t.Fatalf("stand-ins used after patch %d: %v, want perf_event_header__init_id", step, syms)
	}
	h := files["include/linux/perf_event.h"]
	i := bytes.Index(h, []byte("#endif\n"))
	if i < 0 {
		t.Fatalf("no stand-in block at the top of perf_event.h:\n%.300s", h)
	}
	src := string(h[:i+len("#endif\n")]) + "perf_event_header__init_id(&ev->event.header, &sample, event);\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("gcc", "-E", "-P", filepath.Join(dir, "x.c")).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc -E: %v\n%s", err, out)
	}
	want := "perf_event_header__init((&ev->event.header),(&sample),(&ev->event.header)->type,(&ev->event.header)->misc,(&ev->event.header)->size,(event));"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("gcc reads the call as\n%s\nwant\n%s", got, want)
	}
	// Before the perf patch nothing is needed.
	if needs, err := Needs(r, step-3); err != nil || len(needs) != 0 {
		t.Errorf("after patch %d: %v %v, want no stand-in", step-3, needs, err)
	}
}
