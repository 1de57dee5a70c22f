package buildtest

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"kpatch/plumbing/kbuild"
)

func TestExpandConfigs(t *testing.T) {
	var all []string
	for _, c := range Configs {
		all = append(all, c.Name)
	}
	for _, tc := range []struct {
		in      []string
		want    []string
		wantErr string
	}{
		{[]string{"robot"}, all, ""},
		{[]string{"default"}, DefaultConfigs, ""},
		{[]string{"i386", "x86_64"}, []string{"x86_64", "i386"}, ""},
		{[]string{"kcsan", "robot", "kcsan"}, all, ""},
		{[]string{"um", "arm64"}, []string{"um", "arm64"}, ""},
		{[]string{"x86"}, nil, `unknown configuration "x86": choose among x86_64, x86_64-noia32, i386, um, clang, kcsan, kasan, arm64, default, robot`},
	} {
		got, err := ExpandConfigs(tc.in)
		switch {
		case tc.wantErr != "":
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%q: error %v, want %s", tc.in, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case !reflect.DeepEqual(got, tc.want):
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
	if !reflect.DeepEqual(DefaultConfigs, []string{"x86_64", "x86_64-noia32", "i386"}) {
		t.Errorf("the default configurations are %q: the three x86 ones keep their names and stay the default", DefaultConfigs)
	}
}

// Each configuration's fragment and the symbols it checks at the base
// agree: a symbol the fragment sets is checked for that value, so a
// fragment that Kconfig overrides (a dependency missing) is a base error,
// not a configuration silently built without it.
func TestConfigFragments(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Configs {
		if seen[c.Name] {
			t.Errorf("%s: two configurations of that name", c.Name)
		}
		seen[c.Name] = true
		frag := kbuild.ParseFragment(c.Fragment)
		for sym, v := range frag {
			if sym == "DEBUG_KERNEL" || sym == "SYSFS" || sym == "SLUB_TINY" {
				continue // dependencies of what is checked
			}
			if got, ok := c.Base[sym]; !ok || got != v {
				t.Errorf("%s: the fragment sets %s=%s, the base check wants %q", c.Name, sym, v, got)
			}
		}
		if c.Link {
			if c.Base["NOINSTR_VALIDATION"] != "y" {
				t.Errorf("%s links vmlinux for objtool's noinstr validation but does not check NOINSTR_VALIDATION=y", c.Name)
			}
		}
		if c.Make != nil && c.Compiler == "" {
			t.Errorf("%s: make variables %q but no compiler for --cc to wrap", c.Name, c.Make)
		}
	}
	if c, _ := ConfigNamed("um"); c.Start != "defconfig" || c.Arch != "um" {
		t.Errorf("um: %s from %q, want ARCH=um from defconfig as kunit.py builds", c.Arch, c.Start)
	}
}

func TestFlagsFor(t *testing.T) {
	clang, _ := ConfigNamed("clang")
	arm, _ := ConfigNamed("arm64")
	x86, _ := ConfigNamed("x86_64")
	um, _ := ConfigNamed("um")
	for _, tc := range []struct {
		cc     string
		c      Config
		sparse bool
		want   string
	}{
		{"", x86, true, "W=1 C=1"},
		{"", um, true, "W=1"},
		{"ccache gcc", x86, false, "W=1 CC=ccache gcc"},
		{"ccache gcc", clang, true, "W=1 LLVM=1 CC=ccache clang"},
		{"ccache", clang, true, "W=1 LLVM=1 CC=ccache clang"},
		{"", clang, true, "W=1 LLVM=1"},
		{"distcc", arm, false, "W=1 CROSS_COMPILE=aarch64-linux-gnu- CC=distcc aarch64-linux-gnu-gcc"},
		{"ccache clang-14", clang, false, "W=1 LLVM=1 CC=ccache clang-14"},
	} {
		got := strings.Join(Options{CC: tc.cc}.flagsFor(tc.c, tc.sparse), " ")
		if got != tc.want {
			t.Errorf("--cc %q %s: %s, want %s", tc.cc, tc.c.Name, got, tc.want)
		}
	}
}

// W=2's flags come from the tree's own scripts/Makefile.extrawarn
// (Debian's 6.12 copy in testdata).
func TestW2Flags(t *testing.T) {
	b, err := os.ReadFile("testdata/Makefile.extrawarn-6.12")
	if err != nil {
		t.Fatal(err)
	}
	add, remove := w2Flags(b)
	for _, f := range []string{"-Wshadow", "-Wlogical-op", "-Wunused-macros", "-DKBUILD_EXTRA_WARN2"} {
		if !slices.Contains(add, f) {
			t.Errorf("W=2 adds %q, not %s", add, f)
		}
	}
	for _, f := range []string{"-Wno-type-limits", "-Wno-missing-field-initializers", "-Wno-shift-negative-value", "-Wno-maybe-uninitialized"} {
		if !slices.Contains(remove, f) {
			t.Errorf("W=2 removes %q, not %s", remove, f)
		}
	}
	for _, f := range append(append([]string{}, add...), remove...) {
		if strings.Contains(f, "$(") || strings.Contains(f, "W=3") || f == "-Wcast-align" || f == "-Wmissing-format-attribute" {
			t.Errorf("%q is not W=2's (W=1's, W=3's or a make expression)", f)
		}
	}
	args := []string{"gcc", "-Wp,-MMD,kernel/.fork.o.d", "-nostdinc", "-Wall", "-Wno-missing-field-initializers", "-Wno-type-limits",
		"-Wno-sign-compare", "-DKBUILD_BASENAME=\"fork\"", "-c", "-o", "kernel/fork.o", "/k/src/kernel/fork.c"}
	got := strings.Join(w2Command(args, add, remove), " ")
	want := "gcc -nostdinc -Wall -Wno-sign-compare -DKBUILD_BASENAME=\"fork\" /k/src/kernel/fork.c " + strings.Join(add, " ") + " -S -o /dev/null"
	if got != want {
		t.Errorf("W=2 command\n got %s\nwant %s", got, want)
	}
}

// Only lines the series adds are reported, each with the patch that
// added it: a warning on a line of the base, or in a file the series
// does not touch, is not the series'.
func TestAddedLine(t *testing.T) {
	s, _ := v11(t, "")
	st := newSteps(s)
	line := func(path, text string) int {
		c, _ := st.at(path, st.n)
		for i, l := range strings.Split(string(c), "\n") {
			if l == text {
				return i + 1
			}
		}
		t.Fatalf("%s: no line %q", path, text)
		return 0
	}
	for _, tc := range []struct {
		path  string
		line  int
		patch int // 0: not reported
	}{
		{"kernel/exit.c", line("kernel/exit.c", "\tunwind_deferred_task_exit(tsk);"), 11},
		{"kernel/exit.c", line("kernel/exit.c", "void __noreturn do_exit(long code)"), 0},
		{"kernel/fork.c", line("kernel/fork.c", "#include <linux/unwind_deferred.h>"), 4},
		{"kernel/unwind/user.c", 1, 1},
		{"mm/mmap.c", 10, 0},
	} {
		pr, ok := st.addedLine(Diag{File: tc.path, Line: tc.line, Severity: "warning", Message: "m"}, "x.o", st.n)
		switch {
		case tc.patch == 0 && ok:
			t.Errorf("%s:%d reported (patch %d), a line of the base", tc.path, tc.line, pr.Origin.Patch)
		case tc.patch != 0 && (!ok || pr.Origin.Patch != tc.patch):
			t.Errorf("%s:%d: reported %v from patch %d, want patch %d", tc.path, tc.line, ok, pr.Origin.Patch, tc.patch)
		}
	}
}

// kernel-doc -Wall on the created files: a parameter documented under
// another name (a mutation of unwind_user_faultable()'s comment) is
// reported on the comment's line, blamed on the patch that wrote it,
// and nothing is reported that the unmutated series does not have but
// that mutation.
func TestKernelDocAddedLines(t *testing.T) {
	s, tree := v11(t, "")
	spec := mutate(t, [3]string{"files/kernel/unwind/deferred.c.tmpl",
		" * @trace: The descriptor that will store the user stacktrace",
		" * @tracex: The descriptor that will store the user stacktrace"})
	m, _ := v11(t, spec)
	src := tree
	before, err := newSteps(s).kernelDoc(context.Background(), src, len(s.Patches))
	if err != nil {
		t.Fatal(err)
	}
	st := newSteps(m)
	after, err := st.kernelDoc(context.Background(), src, len(m.Patches))
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]bool{}
	for _, p := range before {
		old[p.Key()] = true
	}
	var added []Problem
	for _, p := range after {
		if !old[p.Key()] {
			added = append(added, p)
		}
	}
	if len(added) == 0 {
		t.Fatalf("no new kernel-doc warning after renaming @trace; before %v, after %v", before, after)
	}
	for _, p := range added {
		if p.File != "kernel/unwind/deferred.c" || !strings.Contains(p.Message, "trace") {
			t.Errorf("new warning %s, want one about the trace parameter of kernel/unwind/deferred.c", p.Diag)
		}
		if p.Origin.Patch != 4 || p.Origin.PatchID != "faultable" {
			t.Errorf("%s blamed on %s, want patch 4 (faultable), which wrote unwind_user_faultable()", p.Diag, p.Origin)
		}
	}
	t.Logf("kernel-doc on the mutation: %d warnings, %d new: %v", len(after), len(added), added)
}

func TestWriteSummary(t *testing.T) {
	objtool := Problem{Diag: Diag{File: "vmlinux.o", Severity: "warning",
		Message: "objtool: syscall_exit_to_user_mode+0xaa: call to __kcsan_check_access() leaves .noinstr.text section"},
		Object: "vmlinux.o", Origin: Origin{Patch: 3, PatchID: "cache"},
		Trace: []Frame{{Func: "unwind_reset_info", File: "include/linux/unwind_deferred.h", Line: 40, Patch: 2},
			{Func: "exit_to_user_mode", File: "include/linux/entry-common.h", Line: 364, Patch: 3},
			{Func: "syscall_exit_to_user_mode", File: "kernel/entry/common.c", Line: 218}}}
	sparse := Problem{Diag: Diag{File: "kernel/unwind/user.c", Line: 45, Severity: "warning", Message: "sparse: incorrect type in argument 1 (different address spaces)"},
		Object: "kernel/unwind/user.o", Origin: Origin{Patch: 1, PatchID: "user-api"}}
	warnCells := func(p Problem, from int) []Cell {
		var cells []Cell
		for k := 1; k <= 4; k++ {
			if k < from {
				cells = append(cells, Cell{Status: NotBuilt})
			} else {
				cells = append(cells, Cell{Status: Warn, Warnings: []Problem{p}})
			}
		}
		markSince(cells)
		return cells
	}
	pass := []Cell{{Status: Pass}, {Status: Pass}, {Status: Pass}, {Status: Pass}}
	rep := &Report{Series: "x86 v2", Base: "v6.12", Passed: true, Warned: true, Seconds: 61,
		Patches: []PatchInfo{{1, "user-api", "unwind_user: Add user space unwinding API"}, {2, "faultable", "s2"}, {3, "cache", "unwind_user/deferred: Add unwind cache"}, {4, "x86-fp", "s4"}},
		Configs: []ConfigResult{
			{Name: "x86_64", Arch: "x86_64", Compiler: "gcc (Debian 12.2.0-14) 12.2.0", Flags: []string{"W=1", "C=1"}, Cells: warnCells(sparse, 1)},
			{Name: "kcsan", Arch: "x86_64", Compiler: "gcc (Debian 12.2.0-14) 12.2.0", Flags: []string{"W=1"}, Cells: warnCells(objtool, 4)},
			{Name: "arm64", Arch: "arm64", BaseError: "CONFIG_ARM64=absent, want y: no Kconfig file defines it"},
			{Name: "i386", Arch: "i386", Compiler: "gcc", Cells: pass},
		}}
	var b bytes.Buffer
	rep.WriteSummary(&b)
	out := b.String()
	t.Log(out)
	if !rep.Regression() {
		t.Error("Regression() is false for a run with new warnings")
	}
	for _, want := range []string{
		"BUILD REGRESSION x86 v2 on v6.12 (4 patches)\n",
		"\n>> vmlinux.o: warning: objtool: syscall_exit_to_user_mode+0xaa: call to __kcsan_check_access() leaves .noinstr.text section\n" +
			"   config: kcsan; found building patches 1-4 together\n" +
			"   introduced by patch 3/4 \"unwind_user/deferred: Add unwind cache\", include/linux/entry-common.h:364: line from patch 3 (cache)\n" +
			"     inlined from include/linux/unwind_deferred.h:40 (unwind_reset_info), line of patch 2\n" +
			"     inlined from include/linux/entry-common.h:364 (exit_to_user_mode), line of patch 3\n" +
			"     inlined from kernel/entry/common.c:218 (syscall_exit_to_user_mode), line of the base\n",
		">> kernel/unwind/user.c:45: warning: sparse: incorrect type in argument 1 (different address spaces)\n   config: x86_64; found at patch 1/4 and every patch to 4\n   introduced by patch 1/4 \"unwind_user: Add user space unwinding API\", kernel/unwind/user.c:45: line from patch 1 (user-api)\n",
		"Error/Warning ids grouped by configs:\n\n|-- kcsan\n|   `-- vmlinux.o:warning:objtool-syscall_exit_to_user_mode-call-to-__kcsan_check_access()-leaves-.noinstr.text-section\n`-- x86_64\n    `-- kernel-unwind-user.c:warning:sparse-incorrect-type-in-argument-1-(different-address-spaces)\n",
		"configs tested: 3\nconfigs skipped: 1\n",
		"arm64: CONFIG_ARM64=absent",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks\n%s", want)
		}
	}
	rep = &Report{Series: "v16", Base: "v6.12", Passed: true, Patches: rep.Patches[:1],
		Configs: []ConfigResult{{Name: "um", Arch: "um", Compiler: "gcc", Cells: pass[:1]}}}
	b.Reset()
	rep.WriteSummary(&b)
	if rep.Regression() {
		t.Error("Regression() is true for a clean run")
	}
	if out := b.String(); !strings.HasPrefix(out, "BUILD SUCCESS v16 on v6.12 (1 patches)\n") || !strings.Contains(out, "configs tested: 1\nconfigs skipped: 0\n\nThe following configs have been built successfully.") {
		t.Errorf("a clean run's summary:\n%s", out)
	}
}
