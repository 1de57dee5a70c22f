package buildtest

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/series"
)

// stackX86 generates v16 with the x86 series stacked on it (specDir: an
// edited spec copy, or "" for the built-in one).
func stackX86(t *testing.T, specDir string) *series.Series {
	t.Helper()
	tree := testenv.KernelTree(t)
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: tree, Base: "v6.12", Stack: "x86", WithPrerequisite: true, SpecDir: specDir})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runStack builds the last patch of s (the earlier ones with it) in the
// configurations named; the bases stay in <cache>/build, shared with
// kpatch test build.
func runStack(t *testing.T, s *series.Series, configs ...string) *Report {
	t.Helper()
	testenv.Full(t, "builds kernels: cold a full base build per configuration")
	if os.Getenv("KPATCH_BUILD_MATRIX") == "" {
		t.Skip("builds kernels (cold: a full build per configuration, 5-20 minutes each on 2 cores): set KPATCH_BUILD_MATRIX=1 to run it")
	}
	n := len(s.Patches)
	rep, err := Run(context.Background(), s, Options{Configs: configs, From: n, Jobs: 2, CC: ccacheIfInstalled(), Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Logf("report:\n%s", b.String())
	return rep
}

func ccacheIfInstalled() string {
	if _, err := lookPath("ccache"); err == nil {
		return "ccache gcc"
	}
	return ""
}

// column returns the configuration or check called name.
func column(t *testing.T, rep *Report, name string) ConfigResult {
	t.Helper()
	for _, c := range rep.Configs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no column %s", name)
	return ConfigResult{}
}

// resetCallPatch returns the first patch of s after which exit_to_user_mode()
// in include/linux/entry-common.h calls unwind_reset_info().
func resetCallPatch(t *testing.T, s *series.Series) int {
	t.Helper()
	st := newSteps(s)
	for k := 1; k <= st.n; k++ {
		c, ok := st.at("include/linux/entry-common.h", k)
		if !ok {
			continue
		}
		_, body, found := strings.Cut(string(c), "static __always_inline void exit_to_user_mode(void)\n{")
		if body, _, _ = strings.Cut(body, "\n}\n"); found && strings.Contains(body, "unwind_reset_info();") {
			return k
		}
	}
	t.Fatal("no patch calls unwind_reset_info() in exit_to_user_mode()")
	return 0
}

// KCSAN with DEBUG_ENTRY: objtool finds unwind_reset_info()'s instrumented
// try_cmpxchg() inlined into the noinstr exit path after
// instrumentation_end(). The warning is new (the base has none) and its
// origin is the patch that put the call into exit_to_user_mode().
func TestKCSANObjtoolNoinstr(t *testing.T) {
	s := stackX86(t, "")
	rep := runStack(t, s, "kcsan")
	c := column(t, rep, "kcsan")
	if c.BaseError != "" {
		t.Fatalf("the kcsan base does not build: %s", c.BaseError)
	}
	want := resetCallPatch(t, s)
	cell := c.Cells[len(c.Cells)-1]
	found := 0
	for _, w := range cell.Warnings {
		if w.File != LinkObject || !strings.Contains(w.Message, "__kcsan_check_access() leaves .noinstr.text section") {
			continue
		}
		found++
		if !strings.Contains(w.Message, "exit_to_user_mode") {
			t.Errorf("%s: not in an exit to user mode", w.Diag)
		}
		if w.Origin.Patch != want {
			t.Errorf("%s: blamed on patch %d, want %d (unwind_reset_info() in exit_to_user_mode())", w.Diag, w.Origin.Patch, want)
		}
		ok := false
		for _, f := range w.Trace {
			ok = ok || f.File == "include/linux/entry-common.h" && f.Func == "exit_to_user_mode" && f.Patch == want
		}
		if !ok {
			t.Errorf("%s: its trace %v has no exit_to_user_mode() line of patch %d", w.Diag, w.Trace, want)
		}
	}
	if found == 0 {
		t.Fatalf("no objtool warning on __kcsan_check_access() in vmlinux.o: %+v", cell.Warnings)
	}
	// On demand, the warnings' cone answered: the base was not linked whole.
	if c.BaseOnDemand && c.BaseWhole {
		t.Errorf("the base was built and linked whole for objtool's warnings: the cone did not answer them")
	}
	// The relink the cone's question uses, with every object the series'
	// own, gives exactly the warnings kbuild's link of vmlinux.o gave.
	obj := filepath.Join(c.BuildDir, "obj")
	lc, err := readLinkCommand(obj)
	if err != nil {
		t.Fatal(err)
	}
	byArchive := map[string][]string{}
	for _, a := range lc.archives {
		if byArchive[a], err = archiveMembersOf(context.Background(), obj, a); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dir, name string, args ...string) (string, string, error) {
		return runIn(context.Background(), nil, dir, name, args...)
	}
	keys, err := relink(lc, byArchive, func(m string) string { return filepath.Join(obj, m) }, obj, t.TempDir(), filepath.Join(obj, "tools", "objtool", "objtool"), run)
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, w := range cell.Warnings {
		if w.File == LinkObject {
			linked[w.Key()] = true
		}
	}
	if !maps.Equal(keys, linked) {
		t.Errorf("relinked: %v\nkbuild's link: %v", sortedKeys(keys), sortedKeys(linked))
	}
}

// UML from its defconfig builds the base and the whole series.
func TestUMBuilds(t *testing.T) {
	s := stackX86(t, "")
	rep := runStack(t, s, "um")
	c := column(t, rep, "um")
	if c.BaseError != "" {
		t.Fatalf("the um base does not build: %s", c.BaseError)
	}
	if cell := c.Cells[len(c.Cells)-1]; cell.Status == Fail || len(cell.Objects) == 0 {
		t.Errorf("um at the last patch: %s, %d objects: %+v", cell.Status, len(cell.Objects), cell.Errors)
	}
}

// A comparison W=1 leaves alone (-Wno-type-limits) and W=2 warns about,
// added by a mutation of a created file: the W=2 column reports it, on
// its line only, with the patch that wrote it; the x86_64 column does not.
func TestW2TypeLimits(t *testing.T) {
	const fn = "int kpatch_w2_check(unsigned int x);\nint kpatch_w2_check(unsigned int x)\n{\n\treturn x < 0;\n}\n"
	spec := mutate(t, [3]string{"files/kernel/unwind/deferred.c.tmpl",
		"/**\n * unwind_user_faultable - Produce a user stacktrace in faultable context",
		fn + "\n/**\n * unwind_user_faultable - Produce a user stacktrace in faultable context"})
	s := stackX86(t, spec)
	st := newSteps(s)
	content, _ := st.at("kernel/unwind/deferred.c", st.n)
	line := 0
	for i, l := range strings.Split(string(content), "\n") {
		if l == "\treturn x < 0;" {
			line = i + 1
		}
	}
	if line == 0 {
		t.Fatal("the mutation is not in kernel/unwind/deferred.c")
	}
	o, _ := st.origin("kernel/unwind/deferred.c", line, st.n)
	rep := runStack(t, s, "x86_64")
	var mine []Problem
	for _, w := range column(t, rep, CheckW2).Cells[st.n-1].Warnings {
		if w.Origin.Patch == 0 {
			t.Errorf("W=2 reports %s, on a line of the base", w.Diag)
		}
		if w.File == "kernel/unwind/deferred.c" && w.Line == line {
			mine = append(mine, w)
		}
	}
	if len(mine) != 1 || !strings.Contains(mine[0].Message, "-Wtype-limits") || mine[0].Origin.Patch != o.Patch || o.Patch == 0 {
		t.Errorf("W=2 warnings on kernel/unwind/deferred.c:%d: %+v, want one -Wtype-limits from patch %d", line, mine, o.Patch)
	}
	for _, w := range column(t, rep, "x86_64").Cells[st.n-1].Warnings {
		if strings.Contains(w.Message, "type-limits") || strings.Contains(w.Message, "always false") {
			t.Errorf("W=1 reports %s", w.Diag)
		}
	}
}
