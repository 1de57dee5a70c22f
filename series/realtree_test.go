package series_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/series"
)

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=kpatch", "GIT_AUTHOR_EMAIL=kpatch@localhost",
		"GIT_COMMITTER_NAME=kpatch", "GIT_COMMITTER_EMAIL=kpatch@localhost")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestRealTreeGitAmAndBuild generates each revision against Debian's 6.12,
// applies the 14 patches with real git am, and compiles every file the
// series adds or touches under an x86_64 config with IA32_EMULATION and the
// series on: v11 touches perf's core.o and ptrace.o (the moved
// get_segment_base()), v12 stacktrace.o (arch_unwind_user_init() out of
// line).
func TestRealTreeGitAmAndBuild(t *testing.T) {
	testenv.Full(t, "builds kernel objects, minutes")
	for _, tool := range []string{"git", "make", "gcc", "flex", "bison", "bc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not installed: run the README test command, which installs the build tools", tool)
		}
	}
	tests := []struct {
		version int
		objects []string
	}{
		{11, []string{"kernel/unwind/user.o", "kernel/unwind/deferred.o", "kernel/fork.o", "kernel/exit.o", "arch/x86/kernel/ptrace.o", "arch/x86/events/core.o"}},
		{12, []string{"kernel/unwind/user.o", "kernel/unwind/deferred.o", "kernel/fork.o", "kernel/exit.o", "arch/x86/kernel/stacktrace.o"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("v%d", tc.version), func(t *testing.T) { realTreeGitAmAndBuild(t, tc.version, tc.objects) })
	}
}

func realTreeGitAmAndBuild(t *testing.T, version int, objects []string) {
	dir := debianTree(t)
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "v6.12", Version: version})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	files, err := series.WriteDir(filepath.Join(out, "patches"), seriestest.Messages(t, s))
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(out, "linux")
	run(t, out, "git", "clone", "-q", "--shared", "--no-checkout", dir, work)
	run(t, work, "git", "checkout", "-q", "-b", "am-test", "v6.12")
	am := append([]string{"am", "-q", "--whitespace=error-all"}, files[1:]...)
	run(t, work, "git", am...)
	if n := strings.TrimSpace(run(t, work, "git", "rev-list", "--count", "v6.12..HEAD")); n != "14" {
		t.Fatalf("git am applied %s commits, want 14", n)
	}
	// The tree git am produced is the one kpatch computed for --branch.
	if head := strings.TrimSpace(run(t, work, "git", "rev-parse", "HEAD^{tree}")); head != seriestest.TipTree(t, s) {
		t.Errorf("git am tree %s, kpatch computed %s", head, seriestest.TipTree(t, s))
	}

	build := filepath.Join(out, "build")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	mk := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "make", append([]string{"-s", "O=" + build, "ARCH=x86_64"}, args...)...)
		cmd.Dir = work
		o, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, tail(string(o), 40))
		}
		return string(o)
	}
	mk("tinyconfig")
	run(t, work, "scripts/config", "--file", filepath.Join(build, ".config"),
		"-e", "64BIT", "-e", "IA32_EMULATION", "-e", "PERF_EVENTS", "-e", "MODIFY_LDT_SYSCALL", "-e", "PROVE_LOCKING")
	mk("olddefconfig")
	cfg, err := os.ReadFile(filepath.Join(build, ".config"))
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []string{"UNWIND_USER", "HAVE_UNWIND_USER_FP", "HAVE_UNWIND_USER_COMPAT_FP", "IA32_EMULATION"} {
		if !regexp.MustCompile(`(?m)^CONFIG_` + opt + `=y$`).Match(cfg) {
			t.Errorf("CONFIG_%s is not y after olddefconfig", opt)
		}
	}
	start := time.Now()
	var targets []string
	for _, o := range objects {
		if strings.HasPrefix(o, "kernel/unwind/") {
			o = "kernel/unwind/"
		}
		if !slices.Contains(targets, o) {
			targets = append(targets, o)
		}
	}
	mk(append([]string{"-j2"}, targets...)...)
	for _, o := range objects {
		if _, err := os.Stat(filepath.Join(build, o)); err != nil {
			t.Errorf("%s was not built: %v", o, err)
		}
	}
	t.Logf("built the series' objects in %s", time.Since(start).Round(time.Second))
}

func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// TestPlainDirectoryMatchesGit generates from the same tree read as a plain
// directory (its checked-out files) and from git: the patches are the same
// apart from what names the base: the base-commit line and the commit
// hashes on the "From <sha>" lines.
func TestPlainDirectoryMatchesGit(t *testing.T) {
	dir := debianTree(t)
	g, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "v6.12"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "v6.12", Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	strip := regexp.MustCompile(`(?m)^(From [0-9a-f]{40} Mon Sep 17 00:00:00 2001|\nbase-commit: [0-9a-f]{40})\n`)
	gm, pm := seriestest.Messages(t, g), seriestest.Messages(t, p)
	if len(gm) != len(pm) {
		t.Fatalf("%d messages from git, %d from the directory", len(gm), len(pm))
	}
	for i := range gm {
		a, b := strip.ReplaceAllString(gm[i].Text, ""), strip.ReplaceAllString(pm[i].Text, "")
		if a != b {
			t.Errorf("%s differs between git and plain directory", gm[i].Filename)
		}
	}
	if !strings.Contains(gm[0].Text, "base-commit: "+g.Tree.Commit.String()) || strings.Contains(pm[0].Text, "base-commit:") {
		t.Error("base-commit must name the git base and be absent for a plain directory")
	}
}
