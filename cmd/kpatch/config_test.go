package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

// TestGitConfigDefaults: kpatch.tree, kpatch.base and kpatch.stack set
// once in git config (the user's global file, or the repository kpatch
// runs in) are the defaults of --tree, --base and --stack; a flag given
// wins, and -v alone leaves the configured stack out.
func TestGitConfigDefaults(t *testing.T) {
	gittest.Require(t)
	tree := debianTree(t)
	home := t.TempDir()
	global := filepath.Join(home, "gitconfig")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	work := t.TempDir()
	t.Chdir(work)
	// git as the user runs it: the environment above, in work.
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	gen := func(args ...string) (int, string, []string) {
		out := filepath.Join(t.TempDir(), "out")
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"gen", "-o", out}, args...), &stdout, &stderr)
		names, _ := filepath.Glob(filepath.Join(out, "*.patch"))
		return code, stderr.String(), names
	}
	// Nothing configured: the tree is ".", not a kernel tree.
	if code, stderr, _ := gen(); code != 2 || !strings.Contains(stderr, "not a Linux kernel tree") {
		t.Fatalf("no config: exit %d, %q", code, stderr)
	}
	// The tree configured, the base not: refused naming the tags the
	// tree has and the flag and the key that set one.
	git("config", "--global", "kpatch.tree", tree)
	code, stderr, _ := gen()
	for _, want := range []string{tree + " does not have v6.16-rc7", "v16 records it as its base", "its tags: v6.12", "--base v6.12", "git config kpatch.base v6.12"} {
		if code != 2 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("kpatch.tree only: exit %d, %q; want one line holding %q", code, stderr, want)
		}
	}
	// The base in the repository kpatch runs in.
	git("init", "-q")
	git("config", "kpatch.base", "v6.12")
	if code, stderr, names := gen(); code != 0 || len(names) != 11 || !strings.Contains(names[1], "v16-0001-") {
		t.Errorf("kpatch.tree and kpatch.base: exit %d, %q, %d files", code, stderr, len(names))
	}
	// A configured base the tree lacks says it came from git config.
	git("config", "kpatch.base", "v9.9")
	if code, stderr, _ := gen(); code != 2 || !strings.Contains(stderr, "does not have v9.9 (git config kpatch.base") {
		t.Errorf("kpatch.base v9.9: exit %d, %q", code, stderr)
	}
	// A flag wins over the key; a --base the tree lacks is said as the
	// tree's reader says it.
	if code, stderr, _ := gen("--base", "v9.8"); code != 2 || !strings.Contains(stderr, `"v9.8"`) || !strings.Contains(stderr, "unknown revision") {
		t.Errorf("--base v9.8: exit %d, %q", code, stderr)
	}
	if code, stderr, _ := gen("--base", "v6.12"); code != 0 {
		t.Errorf("--base over kpatch.base: exit %d, %q", code, stderr)
	}
	git("config", "kpatch.base", "v6.12")
	// The stack: gen writes the stacked series' own patches; -v names a
	// revision of the main series and leaves the configured stack out.
	git("config", "--global", "kpatch.stack", "x86")
	if code, stderr, names := gen(); code != 0 || len(names) != 3 {
		t.Errorf("kpatch.stack x86: exit %d, %q, files %v; want the x86 series' cover and 2 patches", code, stderr, names)
	}
	if code, stderr, names := gen("-v", "12"); code != 0 || len(names) != 15 {
		t.Errorf("kpatch.stack x86 and -v 12: exit %d, %q, %d files; want v12", code, stderr, len(names))
	}
	var stdout bytes.Buffer
	if code := run([]string{"tree", "--tags"}, &stdout, &bytes.Buffer{}); code != 0 || stdout.String() != "v6.12\n" {
		t.Errorf("kpatch tree --tags: exit %d, %q; want v6.12", code, stdout.String())
	}
	if _, err := os.Stat(filepath.Join(work, "outgoing")); err == nil {
		t.Error("a default -o was written")
	}
}

// TestDefaultStack: a command's own default --stack (seriesFlagSpec.stack,
// for test qemu's default boot) is the series it takes without flags; -v
// alone names a revision of the main series; --stack and --on keep a
// stack.
func TestDefaultStack(t *testing.T) {
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "x86 v2"},
		{[]string{"-v", "13"}, "v13"},
		{[]string{"--stack", "x86", "-v", "2"}, "x86 v2"},
		{[]string{"--on", "v15"}, "x86 v2 on v15"},
	} {
		fs := newFlags("test", "", "")
		sf := fs.seriesFlags(seriesFlagSpec{tree: ".", stack: "x86"})
		if _, err := fs.parse(tc.args, 0, 0); err != nil {
			t.Fatal(err)
		}
		sel, err := sf.selection(false)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := sel.Revision.Name(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: %s, want %s", tc.args, got, tc.want)
		}
	}
}

// TestTestQEMUDefaultBoot: kpatch test qemu with no revision named boots
// v16 with the x86 part as 6.19 merged it and says so first; -v 16 alone
// is the main series, which selects no x86 unwinder and is refused (exit
// 2); a stack named by flag is not announced as the default.
func TestTestQEMUDefaultBoot(t *testing.T) {
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Chdir(t.TempDir())
	missing := filepath.Join(t.TempDir(), "no-tree")
	for _, tc := range []struct {
		args     []string
		announce bool
		refusal  string
	}{
		{nil, true, ""},
		{[]string{"--stack", "x86-6.19"}, false, ""},
		{[]string{"-v", "16"}, false, "nothing selects the unwinder on x86_64"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"test", "qemu", "--tree", missing, "--base", "v6.12"}, tc.args...), &stdout, &stderr)
		if code != 2 {
			t.Errorf("%q: exit %d with a missing tree, want 2:\n%s", tc.args, code, stderr.String())
		}
		first, _, _ := strings.Cut(stderr.String(), "\n")
		if got := strings.Contains(first, "booting x86-6.19 v1 on v16, the newest state with an unwinder on x86"); got != tc.announce {
			t.Errorf("%q: first line %q, announced %v, want %v", tc.args, first, got, tc.announce)
		}
		if tc.refusal != "" && !strings.Contains(stderr.String(), tc.refusal) {
			t.Errorf("%q: %s, want a refusal saying %q", tc.args, stderr.String(), tc.refusal)
		}
	}
}
