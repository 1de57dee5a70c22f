package verify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/cache"
)

// preparedTree returns a prepared x86_64 build tree of Debian's 6.12
// (tinyconfig with the matrix's x86_64 fragment, make prepare, and
// kernel/fork.o and kernel/exit.o compiled for their .cmd files), made
// once in <cache>/verify-test/x86_64 (a few minutes of both cores).
func preparedTree(t *testing.T) *BuildTree {
	t.Helper()
	cache, err := cache.Dir()
	if err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(cache, "verify-test", "x86_64")
	ready := func() bool {
		for _, f := range []string{"kernel/.fork.o.cmd", "kernel/.exit.o.cmd", "include/generated/autoconf.h"} {
			if _, err := os.Stat(filepath.Join(obj, f)); err != nil {
				return false
			}
		}
		return true
	}
	if !ready() {
		src := debianTree(t)
		mk := func(args ...string) {
			t.Helper()
			cmd := exec.Command("make", append([]string{"-s", "O=" + obj, "ARCH=x86_64"}, args...)...)
			cmd.Dir = src
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		t.Logf("preparing %s (once)", obj)
		mk("tinyconfig")
		f, err := os.OpenFile(filepath.Join(obj, ".config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(f, "CONFIG_64BIT=y\nCONFIG_IA32_EMULATION=y\nCONFIG_PERF_EVENTS=y\n")
		f.Close()
		mk("olddefconfig")
		mk("-j2", "prepare")
		mk("-j2", "kernel/fork.o", "kernel/exit.o")
	}
	tree, err := OpenBuildTree(obj)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// findingKey is a finding without its note-dependent parts.
func findingKey(f Finding) string {
	return fmt.Sprintf("%d %s %s %s %s", f.Patch, f.Severity, f.ID, f.Where(), f.Message)
}

// TestKbuildV16: v16 generated on Debian 6.12 and read through a real
// prepared build tree: every C file of the series is read from kbuild's
// preprocessed unit (fork.c and exit.c with their own flags, the new
// kernel/unwind/ files with a kernel/ sibling's), the report and JSON say
// so, no C_EVAL is left, and the findings are the prelude's reading's,
// one by one.
func TestKbuildV16(t *testing.T) {
	testenv.Full(t, "prepares a kernel build tree once")
	tree := preparedTree(t)
	g, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: debianTree(t), Base: "v6.12", Version: 16})
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromGenerated(g)
	if err != nil {
		t.Fatal(err)
	}
	opt := seriesOpts(t)
	prelude := Run(s, opt)
	opt.BuildTrees, opt.PreprocessCache = []*BuildTree{tree}, t.TempDir()
	kb := Run(s, opt)
	rep := NewReport(s, kb)
	var text strings.Builder
	rep.WriteText(&text)
	t.Logf("report:\n%s", text.String())
	want := map[string]string{"kernel/fork.c": "kernel/fork.o", "kernel/exit.c": "kernel/exit.o",
		"kernel/unwind/deferred.c": "sibling", "kernel/unwind/user.c": "sibling"}
	read := map[string]CRead{}
	for _, r := range rep.CRead {
		read[r.File] = r
	}
	for file, flags := range want {
		r, ok := read[file]
		switch {
		case !ok:
			t.Errorf("%s: not read", file)
		case r.Via != "kbuild" || len(r.Trees) != 1 || r.Trees[0].Config != "x86_64":
			t.Errorf("%s: %+v", file, r)
		case flags == "sibling" && (r.Trees[0].Flags == strings.TrimSuffix(file, ".c")+".o" || !strings.HasPrefix(r.Trees[0].Flags, "kernel/")):
			t.Errorf("%s: flags of %s, want a kernel/ sibling's", file, r.Trees[0].Flags)
		case flags != "sibling" && r.Trees[0].Flags != flags:
			t.Errorf("%s: flags of %s, want %s", file, r.Trees[0].Flags, flags)
		}
		if !strings.Contains(text.String(), "note: "+file+": C read from kbuild's preprocessed unit (config x86_64, flags of ") {
			t.Errorf("the report does not say how %s was read", file)
		}
	}
	if len(rep.CRead) != len(want) {
		t.Errorf("c_read: %+v", rep.CRead)
	}
	if n := len(only(kb, "C_EVAL")); n > 0 {
		t.Errorf("%d C_EVAL findings through the build tree: %v", n, only(kb, "C_EVAL"))
	}
	pre, got := map[string]bool{}, map[string]bool{}
	for _, f := range prelude {
		pre[findingKey(f)] = true
	}
	for _, f := range kb {
		got[findingKey(f)] = true
		if !pre[findingKey(f)] {
			t.Errorf("only through the build tree: %s", findingKey(f))
		}
	}
	for k := range pre {
		if !got[k] && !strings.Contains(k, " C_EVAL ") {
			t.Errorf("only with the prelude: %s", k)
		}
	}
	if len(only(kb, "TASK_CURRENT")) != 1 || len(only(kb, "NOINSTR_ACCESS")) != 1 {
		t.Errorf("the review's points on v16 (TASK_CURRENT, NOINSTR_ACCESS) lost: %v", kb)
	}
}

// TestKbuildRealFiles: a patch made with the real git that adds copies of
// kernel/fork.c and mm/memory.c (the kernel's own code, whole): the
// prelude cannot parse some of their definitions (C_EVAL), the units of
// the build tree parse every one (kernel/fork_copy.c with kernel/'s flags,
// mm/memory_copy.c, in a directory the tree compiled nothing in, with the
// first C object of kernel/'s), and neither reading makes a used function
// look unused.
func TestKbuildRealFiles(t *testing.T) {
	testenv.Full(t, "prepares a kernel build tree once")
	tree := preparedTree(t)
	gittest.Require(t)
	src := debianTree(t)
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	gittest.Run(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	for _, f := range []string{"kernel/fork.c", "mm/memory.c"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(repo, strings.TrimSuffix(f, ".c")+"_copy.c")
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Run(t, repo, "add", ".")
	gittest.Run(t, repo, "commit", "-q", "-m", "kernel, mm: add copies of fork.c and memory.c\n\nAs Linux 6.12 has them.\n\nSigned-off-by: t <t@example.com>")
	out := filepath.Join(t.TempDir(), "out")
	gittest.Run(t, repo, "format-patch", "-q", "-o", out, "-1")
	s, err := ReadMail(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	prelude := Run(s, Options{})
	kb := Run(s, Options{BuildTrees: []*BuildTree{tree}})
	if len(only(prelude, "C_EVAL")) == 0 {
		t.Fatal("the prelude now parses both files whole: find other code for this test")
	}
	for _, f := range only(prelude, "C_EVAL") {
		t.Logf("prelude: %s", findingKey(f))
	}
	if n := only(kb, "C_EVAL"); len(n) > 0 {
		t.Errorf("C_EVAL through the build tree: %v", n)
	}
	for _, fs := range [][]Finding{prelude, kb} {
		if u := only(fs, "UNUSED_STATIC"); len(u) > 0 {
			t.Errorf("UNUSED_STATIC on the kernel's own code: %v", u)
		}
	}
	rep := NewReport(s, kb)
	if len(rep.CRead) != 2 {
		t.Fatalf("c_read %+v", rep.CRead)
	}
	for _, r := range rep.CRead {
		if r.Via != "kbuild" || !strings.HasPrefix(r.Trees[0].Flags, "kernel/") {
			t.Errorf("%+v", r)
		}
	}
}

// TestKbuildSysfs: the sysfs drivers of TestSysfsDrivers and
// TestSysfsDriversMutated read through a real prepared build tree: every
// file is read from kbuild's preprocessed unit, where the kernel's own
// DEVICE_ATTR_RW(), ATTRIBUTE_GROUPS() and SENSOR_DEVICE_ATTR_RO() are
// expanded: no UNUSED_STATIC on the drivers as they are, and one for the
// show function of each DEVICE_ATTR line taken out.
func TestKbuildSysfs(t *testing.T) {
	testenv.Full(t, "prepares a kernel build tree once")
	tree := preparedTree(t)
	src := debianTree(t)
	files := sysfsFiles(t, src, 100)
	s := creationSeries(t, files, treeFiles(t, src, files))
	fs := Run(s, Options{BuildTrees: []*BuildTree{tree}})
	for _, e := range unusedErrors(s, fs) {
		t.Errorf("on the kernel's own code, through the build tree: %s", e)
	}
	expanded := 0
	for _, r := range NewReport(s, fs).CRead {
		if r.Via == "kbuild" {
			expanded++
		} else {
			t.Logf("%s: %s (%s)", r.File, r.Via, r.Why)
		}
	}
	if expanded < len(files)/2 {
		t.Errorf("only %d of %d files read from the build tree", expanded, len(files))
	}
	paths, content, want := mutatedSysfs(t, src, 6)
	m := creationSeries(t, paths, content)
	mf := Run(m, Options{BuildTrees: []*BuildTree{tree}})
	for _, k := range missedUnused(mf, want) {
		t.Errorf("%s: no UNUSED_STATIC through the build tree without its DEVICE_ATTR line", k)
	}
}
