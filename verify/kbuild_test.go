package verify

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"kpatch/internal/testenv"
)

// fakeBuildTree lays out an object tree whose kernel/fork.o was compiled
// with the command kbuild really wrote (testdata/kbuild/fork.o.cmd, from
// make O=... kernel/fork.o on Debian's 6.12), its source tree moved to
// testdata/kbuild/src: a few headers with the kernel's definitions of the
// macros the unused-code test files use (module_init(), pr_info(),
// hlist_for_each_entry_rcu(), skb_list_walk_safe()).
func fakeBuildTree(t *testing.T) *BuildTree {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		testenv.Missing(t, "gcc", "apt-get install gcc")
	}
	src, err := filepath.Abs("testdata/kbuild/src")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := os.ReadFile("testdata/kbuild/fork.o.cmd")
	if err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(t.TempDir(), "x86_64")
	for name, data := range map[string][]byte{
		".config":                          []byte("#\n# Linux/x86 6.12 Kernel Configuration\n#\nCONFIG_X86_64=y\nCONFIG_64BIT=y\n"),
		"include/generated/autoconf.h":     []byte("#define CONFIG_X86_64 1\n#define CONFIG_64BIT 1\n"),
		"kernel/.fork.o.cmd":               bytes.ReplaceAll(cmd, []byte("/root/.cache/kpatch/linux-6.12"), []byte(src)),
		"arch/x86/include/generated/.keep": nil,
	} {
		p := filepath.Join(obj, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(src, filepath.Join(obj, "source")); err != nil {
		t.Fatal(err)
	}
	tree, err := OpenBuildTree(obj)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestKbuildUnusedStatic reads the unused-code series through a build
// tree: drivers/misc/foo.c is preprocessed with the real flags of
// kernel/fork.o (the tree compiled nothing in drivers/), the series'
// foo.h laid over the tree, and parsed after the real expansion of the
// loops and initcalls. The findings are the ones of the prelude's
// reading (TestUnusedStatic): nothing that is used looks unused, the
// definition cc/v4 cannot parse is reported once with the reason.
func TestKbuildUnusedStatic(t *testing.T) {
	tree := fakeBuildTree(t)
	s := unusedSeries(t)
	summary := func(fs []Finding) []string {
		var got []string
		for _, f := range fs {
			switch f.ID {
			case "UNUSED_STATIC", "UNUSED_INLINE", "UNUSED_MACRO", "C_EVAL":
				got = append(got, fmt.Sprintf("%d %s %s %s", f.Patch, f.Severity, f.ID, f.Where()))
			}
		}
		sort.Strings(got)
		return got
	}
	prelude := summary(Run(s, Options{}))
	cache := t.TempDir()
	fs := Run(s, Options{BuildTrees: []*BuildTree{tree}, PreprocessCache: cache})
	got := summary(fs)
	if strings.Join(got, "\n") != strings.Join(prelude, "\n") {
		t.Errorf("through the build tree:\n%s\nwith the prelude:\n%s", strings.Join(got, "\n"), strings.Join(prelude, "\n"))
	}
	evals := 0
	for _, f := range fs {
		if f.ID == "C_EVAL" {
			evals++
			if !strings.Contains(f.Message, "foo_walk_unknown() could not be parsed (line 75: ") {
				t.Errorf("C_EVAL: %s", f.Message)
			}
		}
	}
	if evals != 1 {
		t.Errorf("%d C_EVAL findings, want foo_walk_unknown() once", evals)
	}
	rep := NewReport(s, fs)
	want := "drivers/misc/foo.c: C read from kbuild's preprocessed unit (config x86_64, flags of kernel/fork.o)"
	if !slices.Contains(rep.Notes, want) {
		t.Errorf("notes %q, want %q", rep.Notes, want)
	}
	if len(rep.CRead) != 1 || rep.CRead[0].Via != "kbuild" || rep.CRead[0].Trees[0].Flags != "kernel/fork.o" {
		t.Errorf("c_read %+v", rep.CRead)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"flags_of": "kernel/fork.o"`) {
		t.Errorf("JSON: %v\n%s", err, js.String())
	}
	// a second run reads the preprocessed units from the cache: the same
	entries, _ := filepath.Glob(filepath.Join(cache, "*", "*.gob"))
	if len(entries) == 0 {
		t.Fatal("nothing cached")
	}
	if again := summary(Run(s, Options{BuildTrees: []*BuildTree{tree}, PreprocessCache: cache})); strings.Join(again, "\n") != strings.Join(got, "\n") {
		t.Errorf("from the cache:\n%s\nfirst:\n%s", strings.Join(again, "\n"), strings.Join(got, "\n"))
	}
}

// TestKbuildUnitReal checks the unit itself: the loops and initcalls are
// the kernel's expansion (module_init(foo_init) is an initcall variable
// whose initializer names foo_init; the loop calls nothing), positions are
// the file's lines, the macros the file defines are read from the
// preprocessor, and an edit the build cannot preprocess falls back to
// the prelude with the reason.
func TestKbuildUnitReal(t *testing.T) {
	tree := fakeBuildTree(t)
	s := unusedSeries(t)
	kb, err := newKbuildReader(context.Background(), []*BuildTree{tree}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer kb.close()
	uc := newUnitCache()
	uc.kb = kb
	c := &checker{s: s, units: uc, ctx: context.Background(), seen: map[string]bool{}}
	u, ok := c.kbuildUnit(kb, tree, "drivers/misc/foo.c", 1, afterPatch)
	if !ok || u == nil {
		t.Fatalf("not read through the build tree: %+v", kb.reads)
	}
	var uses []string
	for _, r := range u.uses {
		uses = append(uses, fmt.Sprintf("%s:%d", r.name, r.line))
	}
	for _, want := range []string{"foo_init:89", "foo_exit:90"} {
		if !slices.Contains(uses, want) {
			t.Errorf("file-scope uses %q lack %s (module_init's initcall)", uses, want)
		}
	}
	var vars []string
	for _, v := range u.vars {
		vars = append(vars, v.name)
	}
	initcall := false
	for _, v := range vars {
		initcall = initcall || strings.HasPrefix(v, "__initcall__")
	}
	if !initcall {
		t.Errorf("no initcall variable among %q", vars)
	}
	lines := map[string]int{}
	for _, f := range u.funcs {
		lines[f.name] = f.line
	}
	for name, line := range map[string]int{"foo_match": 20, "foo_lookup": 42, "foo_rx": 53, "foo_init": 79} {
		if lines[name] != line {
			t.Errorf("%s() at line %d, want %d", name, lines[name], line)
		}
	}
	if _, ok := lines["foo_walk_unknown"]; ok || len(u.failed) != 1 || u.failed[0].name != "foo_walk_unknown" {
		t.Errorf("failed %+v", u.failed)
	}
	var macros []string
	for _, m := range u.macros {
		macros = append(macros, fmt.Sprintf("%s:%d", m.name, m.line))
	}
	if strings.Join(macros, " ") != "FOO_UNUSED_MACRO:7 FOO_USED_MACRO:8" {
		t.Errorf("macros %q", macros)
	}
	// an include the tree does not have: the prelude reads it, and says why
	broken := &Series{Source: "broken", Patches: []*Patch{{Number: 1, Subject: "x", Files: []*File{
		{Path: "kernel/x.c", Created: true, Known: true, New: []byte("#include <linux/nonexistent.h>\nstatic int x;\n"), Added: fileLines([]byte("#include <linux/nonexistent.h>\nstatic int x;\n"), 1)},
	}}}}
	fs := Run(broken, Options{BuildTrees: []*BuildTree{tree}})
	rep := NewReport(broken, fs)
	if len(rep.CRead) != 1 || rep.CRead[0].Via != "prelude" || !strings.Contains(rep.CRead[0].Why, "linux/nonexistent.h: No such file or directory") {
		t.Errorf("c_read %+v", rep.CRead)
	}
	if len(only(fs, "UNUSED_STATIC")) != 1 {
		t.Errorf("the prelude's reading did not run: %v", fs)
	}
}

// TestBuildTreesRefused: what --build-dir refuses, each with one line that
// says what to give.
func TestBuildTreesRefused(t *testing.T) {
	empty := t.TempDir()
	unprepared := t.TempDir()
	os.WriteFile(filepath.Join(unprepared, ".config"), []byte("#\nCONFIG_X86_64=y\n"), 0o644)
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(empty, "missing"), "is not a directory: give a prepared make O= tree"},
		{empty, "holds no prepared kernel build tree"},
		{unprepared, "is not prepared: include/generated/autoconf.h is missing (run make O="},
	} {
		_, _, err := BuildTrees(c.dir)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("BuildTrees(%s) = %v; want one line with %q", c.dir, err, c.want)
		}
	}
	if trees, _, err := BuildTrees(filepath.Dir(fakeBuildTree(t).Obj)); err != nil || len(trees) != 1 || trees[0].Name != "x86_64" {
		t.Errorf("a directory of trees: %v, %v", trees, err)
	}
}

// TestSweepOverlays: the overlay directory of a run whose process is gone
// (stopped by Ctrl-C) is removed by the next run; a live process's stays.
func TestSweepOverlays(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", overlayPrefix, dead.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(gone)
	live, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", overlayPrefix, os.Getppid()))
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(live)
	// a name without the process ID (os.MkdirTemp's digits only) is not
	// taken for one
	other, err := os.MkdirTemp("", overlayPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(other)
	sweepOverlays()
	if _, err := os.Stat(other); err != nil {
		t.Errorf("%s without a process ID is removed: %v", other, err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("%s of an ended process is left: %v", gone, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s of a live process is removed: %v", live, err)
	}
}

// TestPruneCache: a kept unit no run has read for cacheAge goes; one read
// since stays.
func TestPruneCache(t *testing.T) {
	dir := t.TempDir()
	stale, fresh := filepath.Join(dir, "ab", "stale.gob"), filepath.Join(dir, "cd", "fresh.gob")
	for _, p := range []string{stale, fresh} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	old := time.Now().Add(-cacheAge - time.Hour)
	os.Chtimes(stale, old, old)
	pruneCache(dir)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s stays: %v", stale, err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("%s removed: %v", fresh, err)
	}
}
