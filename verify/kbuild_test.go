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

	"kpatch/internal/testenv"
	"kpatch/verify/cunit"
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
	s.index()
	r, err := s.newReader(context.Background(), Options{BuildTrees: []*BuildTree{tree}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	u := r.Unit("drivers/misc/foo.c", 1, cunit.After, cunit.Envs()[0])
	if reads := r.CReads(); u == nil || len(reads) != 1 || reads[0].Via != "kbuild" {
		t.Fatalf("not read through the build tree: %+v", reads)
	}
	var uses []string
	for _, r := range u.Uses {
		uses = append(uses, fmt.Sprintf("%s:%d", r.Name, r.Line))
	}
	for _, want := range []string{"foo_init:96", "foo_exit:97"} {
		if !slices.Contains(uses, want) {
			t.Errorf("file-scope uses %q lack %s (module_init's initcall)", uses, want)
		}
	}
	var vars []string
	for _, v := range u.Vars {
		vars = append(vars, v.Name)
	}
	initcall := false
	for _, v := range vars {
		initcall = initcall || strings.HasPrefix(v, "__initcall__")
	}
	if !initcall {
		t.Errorf("no initcall variable among %q", vars)
	}
	lines := map[string]int{}
	for _, f := range u.Funcs {
		lines[f.Name] = f.Line
	}
	for name, line := range map[string]int{"foo_match": 20, "foo_lookup": 42, "foo_rx": 53, "foo_init": 79} {
		if lines[name] != line {
			t.Errorf("%s() at line %d, want %d", name, lines[name], line)
		}
	}
	if _, ok := lines["foo_walk_unknown"]; ok || len(u.Failed) != 1 || u.Failed[0].Name != "foo_walk_unknown" {
		t.Errorf("failed %+v", u.Failed)
	}
	var macros []string
	for _, m := range u.Macros {
		macros = append(macros, fmt.Sprintf("%s:%d", m.Name, m.Line))
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
