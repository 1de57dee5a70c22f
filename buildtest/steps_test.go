package buildtest

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/kbuild"
	"kpatch/series"
)

// v11 generates the series against Debian's 6.12 tree (created once in
// the cache).
func v11(t testing.TB, specDir string) (*series.Series, string) {
	t.Helper()
	tree := testenv.KernelTree(t)
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: tree, Base: "v6.12", Version: 11, SpecDir: specDir})
	if err != nil {
		t.Fatal(err)
	}
	return s, tree
}

func TestOriginOfEdits(t *testing.T) {
	s, _ := v11(t, "")
	st := newSteps(s)
	tests := []struct {
		path     string
		text     string // the line to find after the last patch
		patch    int
		source   string // prefix of Origin.Source
		fromBase bool
	}{
		{"kernel/exit.c", "\tunwind_deferred_task_exit(tsk);", 11, "v11/task-exit.patch:40", false},
		{"kernel/exit.c", "#include <linux/unwind_deferred.h>", 11, "v11/task-exit.patch:35", false},
		{"kernel/fork.c", "#include <linux/unwind_deferred.h>", 4, "v11/faultable.patch:48", false},
		{"kernel/exit.c", "void __noreturn do_exit(long code)", 0, "", true},
		// moved from arch/x86/events/core.c by patch 13's move-function edit
		{"arch/x86/kernel/ptrace.c", "unsigned long segment_base_address(unsigned int segment)", 13, "v11/x86-segment-base.patch:20", false},
		// patch 4 included it after <linux/kernel.h>; patch 6 moved it up.
		{"kernel/unwind/deferred.c", "#include <linux/unwind_deferred.h>", 6, "files/kernel/unwind/deferred.c.tmpl:8", false},
	}
	for _, tc := range tests {
		content, ok := st.at(tc.path, st.n)
		if !ok {
			t.Fatalf("%s not touched by the series", tc.path)
		}
		line := 0
		for i, l := range strings.Split(string(content), "\n") {
			if l == tc.text {
				line = i + 1
				break
			}
		}
		if line == 0 {
			t.Fatalf("%s: no line %q after the last patch", tc.path, tc.text)
		}
		o, ok := st.origin(tc.path, line, st.n)
		if !ok {
			t.Fatalf("%s:%d: no origin", tc.path, line)
		}
		if tc.fromBase {
			if o.Patch != 0 {
				t.Errorf("%s:%d %q: origin %v, want the base", tc.path, line, tc.text, o)
			}
			continue
		}
		if o.Patch != tc.patch || !strings.HasPrefix(o.Source, tc.source) {
			t.Errorf("%s:%d %q: origin %+v, want patch %d from %s", tc.path, line, tc.text, o, tc.patch, tc.source)
		}
	}
}

// Every line of every created file, at every step, maps to a template line
// with the same text (or to none, for lines written by an action), and
// its origin is a patch that touched the file, not later than the step.
func TestTemplateLines(t *testing.T) {
	s, _ := v11(t, "")
	st := newSteps(s)
	mapped, total := 0, 0
	for _, path := range s.Revision.Spec().CreatedFiles() {
		tf := st.template(path)
		src, err := fs.ReadFile(st.specFS, tf)
		if err != nil {
			t.Fatal(err)
		}
		tlines := strings.Split(string(src), "\n")
		for k := 1; k <= st.n; k++ {
			content, ok := st.at(path, k)
			if !ok {
				continue
			}
			touchedBy := map[int]bool{}
			for _, j := range s.PatchesTouching(path) {
				touchedBy[j] = true
			}
			for i, l := range strings.Split(strings.TrimSuffix(string(content), "\n"), "\n") {
				total++
				n := st.templateLine(tf, content, i+1)
				if n > 0 {
					mapped++
					if tlines[n-1] != l {
						t.Fatalf("%s after patch %d line %d %q maps to %s:%d %q", path, k, i+1, l, tf, n, tlines[n-1])
					}
				}
				o, _ := st.origin(path, i+1, k)
				if o.Patch < 1 || o.Patch > k || !touchedBy[o.Patch] {
					t.Fatalf("%s after patch %d line %d: origin patch %d", path, k, i+1, o.Patch)
				}
			}
		}
	}
	if mapped < total*95/100 {
		t.Errorf("only %d of %d rendered lines map to a template line", mapped, total)
	}
	t.Logf("%d of %d rendered lines map to their template line", mapped, total)
}

// Patch 13 moves get_segment_base() from arch/x86/events/core.c into
// arch/x86/kernel/ptrace.c; sparse's warning on one of its lines is the
// base's warning in core.c, moved with the code.
func TestMovedFrom(t *testing.T) {
	s, _ := v11(t, "")
	st := newSteps(s)
	const msg = "sparse: incorrect type in initializer (different address spaces)"
	lineWith := func(path, text string) int {
		c, _ := st.at(path, st.n)
		for i, l := range strings.Split(string(c), "\n") {
			if strings.TrimSpace(l) == text {
				return i + 1
			}
		}
		t.Fatalf("%s: no line %q after the last patch", path, text)
		return 0
	}
	base := map[string]bool{"arch/x86/events/core.c: warning: " + msg: true}
	tests := []struct {
		name     string
		line     string
		msg      string
		baseWarn map[string]bool
		want     string
	}{
		{"moved line, warning at the base", "desc = raw_cpu_ptr(gdt_page.gdt) + idx;", msg, base, "arch/x86/events/core.c"},
		{"moved line, no warning at the base", "desc = raw_cpu_ptr(gdt_page.gdt) + idx;", msg, map[string]bool{}, ""},
		{"moved line, another warning at the base", "desc = raw_cpu_ptr(gdt_page.gdt) + idx;", "sparse: cast removes address space", base, ""},
		{"renamed line (not in core.c)", "unsigned long segment_base_address(unsigned int segment)", msg, base, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Diag{File: "arch/x86/kernel/ptrace.c", Line: lineWith("arch/x86/kernel/ptrace.c", tc.line), Severity: "warning", Message: tc.msg}
			o, _ := st.origin(d.File, d.Line, st.n)
			has := func(_, key string) bool { return tc.baseWarn[key] }
			if got := st.movedFrom(d, st.n, o.Patch, has); got != tc.want {
				t.Errorf("movedFrom = %q, want %q (origin %+v)", got, tc.want, o)
			}
		})
	}
}

// TestOverlayStandIns: on Debian's 6.12, v14's last step gets the
// srcu_read_lock_lite stand-in at the top of the series' srcu.h and says
// so; a step before the srcu patch, and v13, get none.
func TestOverlayStandIns(t *testing.T) {
	tree := testenv.KernelTree(t)
	for _, tc := range []struct {
		v, step int // step -1: the last patch
		want    bool
	}{{14, -1, true}, {14, 1, false}, {13, -1, false}} {
		s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: tree, Base: "v6.12", Version: tc.v})
		if err != nil {
			t.Fatal(err)
		}
		step := tc.step
		if step < 0 {
			step = len(s.Patches)
		}
		files, notes, err := newSteps(s).overlay(step, kbuild.GitBaseFile(context.Background(), tree, "v6.12"))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(string(files["include/linux/srcu.h"]), "#define srcu_read_lock_lite srcu_read_lock")
		if got != tc.want || (len(notes) == 1) != tc.want {
			t.Errorf("v%d after patch %d: stand-in in srcu.h %v, notes %q; want %v", tc.v, step, got, notes, tc.want)
		}
	}
}
