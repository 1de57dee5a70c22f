package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"kpatch/internal/gittest"
	"kpatch/internal/testenv"
	"kpatch/series"
)

func debianTree(t *testing.T) string {
	t.Helper()
	return testenv.KernelTree(t)
}

// fingerprint summarises a directory (names, sizes, modes, contents of
// small files; .git's HEAD, index and refs included) to prove that a
// command left it alone.
func fingerprint(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var names []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && rel == ".git/objects" {
			return filepath.SkipDir
		}
		names = append(names, rel)
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		st, err := os.Lstat(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		fmt.Fprintf(h, "%s %d %v %v\n", n, st.Size(), st.Mode(), st.ModTime().UnixNano())
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// fakeKernel copies the files the series reads (series.BaseFiles) from the
// Debian tree into a plain directory, after passing each through edit (if
// not nil).
func fakeKernel(t *testing.T, edit func(path string, b []byte) []byte) string {
	t.Helper()
	src := debianTree(t)
	dir := t.TempDir()
	if err := writeFakeKernel(dir, src, edit); err != nil {
		t.Fatal(err)
	}
	return dir
}

// baseFiles are the Debian tree's files the series reads, read once per
// test process.
var baseFiles struct {
	once  sync.Once
	files map[string][]byte
	err   error
}

// writeFakeKernel writes into dir the files the series reads of the Debian
// tree src, each passed through edit (if not nil).
func writeFakeKernel(dir, src string, edit func(path string, b []byte) []byte) error {
	baseFiles.once.Do(func() {
		sp, err := series.LoadSpec("")
		if err != nil {
			baseFiles.err = err
			return
		}
		baseFiles.files = map[string][]byte{}
		for _, p := range series.BaseFiles(sp) {
			b, err := os.ReadFile(filepath.Join(src, p))
			if err != nil {
				baseFiles.err = err
				return
			}
			baseFiles.files[p] = b
		}
	})
	if baseFiles.err != nil {
		return baseFiles.err
	}
	for p, b := range baseFiles.files {
		if edit != nil {
			b = edit(p, bytes.Clone(b))
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TestGenErrors: bad input is refused with exit 2 and one line, no -o
// and the tree untouched. The refusals that concern the arguments rather
// than the tree run on a git repository of the files the series reads,
// tagged v6.12 as the Debian tree is (one commit, one tag): the same
// refusals, and proving that tree untouched takes no walk through the
// whole kernel.
// TestGenTreeWithoutAnEditedFile: a tree that lacks a file the series
// edits is an input that cannot be used (exit 2), each edit of the file
// named, and nothing is written.
func TestGenTreeWithoutAnEditedFile(t *testing.T) {
	tree := fakeKernel(t, nil)
	if err := os.Remove(filepath.Join(tree, "arch", "Kconfig")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "outgoing")
	var stdout, stderr bytes.Buffer
	code := run([]string{"gen", "-v", "12", "--tree", tree, "-o", out}, &stdout, &stderr)
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr: %s", code, stderr.String())
	}
	msg := stderr.String()
	if !strings.Contains(msg, `arch/Kconfig: "config-after`) || !strings.Contains(msg, "the tree has no such file") {
		t.Errorf("the error does not name the edit of arch/Kconfig and the missing file: %q", msg)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s was written (%v)", out, err)
	}
}

func TestGenErrors(t *testing.T) {
	repo := fakeGitKernel(t, false)
	notKernel := t.TempDir()
	os.WriteFile(filepath.Join(notKernel, "README"), []byte("not linux\n"), 0o644)
	hasSeries := fakeKernel(t, nil)
	os.MkdirAll(filepath.Join(hasSeries, "kernel/unwind"), 0o755)
	os.WriteFile(filepath.Join(hasSeries, "kernel/unwind/user.c"), []byte("// SPDX-License-Identifier: GPL-2.0\n"), 0o644)
	tests := []struct {
		name string
		tree string
		args []string
		want []string // substrings of the one-line error
	}{
		{"not a kernel tree", notKernel, nil, []string{"not a Linux kernel tree", "no MAINTAINERS", "--tree"}},
		{"unknown revision", repo, []string{"--base", "v9.99"}, []string{`"v9.99"`, "unknown revision", "--base"}},
		{"tree already has the series", hasSeries, []string{"--base", "v6.17"}, []string{"kernel/unwind/user.c already exists", "already has the series", "older kernel with --tree"}},
		{"unknown revision of the series", repo, []string{"--base", "v6.12", "-v", "9"}, []string{"v9", "no such revision", "v11"}},
		{"bad spec directory", repo, []string{"--base", "v6.12", "--spec", "/nonexistent"}, []string{"--spec /nonexistent", "not a directory"}},
		{"mbox and report on one output", repo, []string{"--base", "v6.12", "--stdout", "--json"}, []string{"--stdout", "--json", "give one"}},
		{"--on without a stacked series", repo, []string{"--base", "v6.12", "--on", "v15"}, []string{"v15", "--stack NAME"}},
		{"--on a revision that has the stacked patches", repo, []string{"--base", "v6.12", "--stack", "x86", "-v", "2", "--on", "v14"}, []string{"v14 has its patch x86-fp already", "without its patches"}},
		{"--on a revision the spec lacks", repo, []string{"--base", "v6.12", "--stack", "x86", "-v", "2", "--on", "v99"}, []string{"v99", "no such revision"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "outgoing")
			before := fingerprint(t, tt.tree)
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"gen", "-v", "12", "--tree", tt.tree, "-o", out}, tt.args...), &stdout, &stderr)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, stderr.String())
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "kpatch gen: ") {
				t.Errorf("want one line starting with \"kpatch gen: \", got %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("output directory %s was created", out)
			}
			if fingerprint(t, tt.tree) != before {
				t.Errorf("the tree changed")
			}
		})
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestGenBranch records the series on a new branch of a clone: HEAD, the
// index and the working tree stay as they were, the branch holds 14
// commits, and an existing branch is refused.
func TestGenBranch(t *testing.T) {
	clone := filepath.Join(t.TempDir(), "linux")
	if out, err := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", debianTree(t), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(clone, "untracked.txt"), []byte("mine\n"), 0o644)
	head := gitIn(t, clone, "rev-parse", "HEAD")
	index := fingerprint(t, filepath.Join(clone, ".git", "index"))
	var stdout, stderr bytes.Buffer
	args := []string{"gen", "-v", "12", "--tree", clone, "--base", "v6.12", "--branch", "unwind-v11", "-o", filepath.Join(t.TempDir(), "out")}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := gitIn(t, clone, "rev-list", "--count", "v6.12..unwind-v11"); n != "14" {
		t.Errorf("branch has %s commits, want 14", n)
	}
	if s := gitIn(t, clone, "log", "-1", "--format=%an|%s", "unwind-v11"); s != "Josh Poimboeuf|unwind_user/x86: Enable compat mode frame pointer unwinding on x86" {
		t.Errorf("tip commit %q", s)
	}
	gitIn(t, clone, "fsck", "--no-dangling", "--connectivity-only")
	if gitIn(t, clone, "rev-parse", "HEAD") != head {
		t.Error("HEAD moved")
	}
	if fingerprint(t, filepath.Join(clone, ".git", "index")) != index {
		t.Error("the index changed")
	}
	if _, err := os.Stat(filepath.Join(clone, "kernel/unwind")); err == nil {
		t.Error("the working tree was changed")
	}
	if b, _ := os.ReadFile(filepath.Join(clone, "untracked.txt")); string(b) != "mine\n" {
		t.Error("an untracked file was changed")
	}
	stderr.Reset()
	if code := run(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "branch already exists") {
		t.Errorf("second --branch: exit %d, %q", code, stderr.String())
	}
}

// TestGenBranchMatchesMail: the "From <sha>" line of every patch kpatch
// gen writes names the commit --branch records for it, as git
// format-patch run on the branch would, for the main series and for a
// stacked one (whose own patches sit on its prerequisite's commits).
func TestGenBranchMatchesMail(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		total int    // commits on the branch
		said  string // what gen says it recorded
	}{
		{"v12", []string{"-v", "12"}, 14, "branch b records the 14 patches on v6.12"},
		{"x86 on v16", []string{"--stack", "x86"}, 12, "branch b records 12 commits on v6.12: the 10 patches of v16, then the 2 of x86 v2 on v16"},
		{"x86 on v15", []string{"--stack", "x86", "--on", "v15"}, 12, "branch b records 12 commits on v6.12: the 10 patches of v15, then the 2 of x86 v2 on v15 (posted on v16)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clone := filepath.Join(t.TempDir(), "linux")
			if out, err := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", debianTree(t), clone).CombinedOutput(); err != nil {
				t.Fatalf("git clone: %v\n%s", err, out)
			}
			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			args := append([]string{"gen", "--tree", clone, "--base", "v6.12", "--branch", "b", "-o", out}, tc.args...)
			if code := run(args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.said+"\n") {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.said)
			}
			commits := strings.Fields(gitIn(t, clone, "rev-list", "--reverse", "v6.12..b"))
			if len(commits) != tc.total {
				t.Fatalf("branch has %d commits, want %d", len(commits), tc.total)
			}
			files := strings.Fields(stdout.String())
			own := commits[len(commits)-(len(files)-1):]
			for i, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				want := own[len(own)-1] // the cover letter names the tip
				if i > 0 {
					want = own[i-1]
				}
				if first, _, _ := strings.Cut(string(b), "\n"); first != "From "+want+" Mon Sep 17 00:00:00 2001" {
					t.Errorf("%s: %q, the branch has %s", filepath.Base(f), first, want)
				}
			}
		})
	}
}

// TestHelp checks git's conventions: help that is asked for ("--help",
// "kpatch help CMD") goes to stdout with status 0, a usage error to stderr
// with status 2 and nothing on stdout.
func TestHelp(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		wantStdout string // a line the output must hold ("" for no output)
		wantStderr string
	}{
		{[]string{"--help"}, 0, "usage: kpatch <command>", ""},
		{[]string{"help"}, 0, "usage: kpatch <command>", ""},
		{[]string{"gen", "--help"}, 0, "usage: kpatch gen ", ""},
		{[]string{"gen", "-h"}, 0, "usage: kpatch gen ", ""},
		{[]string{"help", "gen"}, 0, "usage: kpatch gen ", ""},
		{[]string{"help", "unwind"}, 0, "usage: kpatch unwind", ""},
		{[]string{"test", "--help"}, 0, "usage: kpatch test", ""},
		{[]string{"tree", "--help"}, 0, "usage: kpatch tree", ""},
		{[]string{"spec", "--help"}, 0, "usage: kpatch spec", ""},
		{[]string{"gen", "--no-such-flag"}, 2, "", "unknown flag --no-such-flag"},
		{[]string{"gen", "stray"}, 2, "", `unexpected argument "stray"`},
		{[]string{"unwind", "--bogus"}, 2, "", "unknown flag --bogus"},
		{[]string{"help", "nosuch"}, 2, "", `unknown command "nosuch"`},
		{[]string{"help", "gen", "tree"}, 2, "", "kpatch help: too many arguments"},
		{[]string{}, 2, "", "usage: kpatch <command>"},
		{[]string{"nosuch"}, 2, "", `unknown command "nosuch"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, stderr.String())
			}
			if tt.wantStdout == "" && stdout.Len() > 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout %q does not hold %q", stdout.String(), tt.wantStdout)
			}
			if tt.wantStderr == "" && stderr.Len() > 0 {
				t.Errorf("stderr %q, want nothing", stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q does not hold %q", stderr.String(), tt.wantStderr)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	run([]string{"help", "gen"}, &stdout, &stderr)
	for _, f := range []string{"--tree", "--base", "-v", "--spec", "-o", "--stdout", "--branch", "--plain", "--json"} {
		if !strings.Contains(stdout.String(), "  "+f) {
			t.Errorf("kpatch help gen does not explain %s", f)
		}
	}
}

// TestGenOutputs checks that --stdout is the files of -o concatenated, as
// with git format-patch, and that --json lists what was written.
func TestGenOutputs(t *testing.T) {
	tree := debianTree(t)
	out := filepath.Join(t.TempDir(), "out")
	var files, mbox, js, stderr bytes.Buffer
	if code := run([]string{"gen", "-v", "12", "--tree", tree, "--base", "v6.12", "-o", out}, &files, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var cat strings.Builder
	names := strings.Fields(files.String())
	if len(names) != 15 {
		t.Fatalf("wrote %d files, want 15", len(names))
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		cat.Write(b)
	}
	if code := run([]string{"gen", "-v", "12", "--tree", tree, "--base", "v6.12", "--stdout"}, &mbox, &stderr); code != 0 {
		t.Fatalf("--stdout: exit %d: %s", code, stderr.String())
	}
	if mbox.String() != cat.String() {
		t.Error("--stdout differs from the files of -o")
	}
	// --to and --cc add recipients to every message.
	mbox.Reset()
	if code := run([]string{"gen", "-v", "12", "--tree", tree, "--base", "v6.12", "--stdout", "--to", "Reviewer <rev@example.org>", "--cc", "list@example.org"}, &mbox, &stderr); code != 0 {
		t.Fatalf("--to/--cc: exit %d: %s", code, stderr.String())
	}
	if n, m := strings.Count(mbox.String(), "    Reviewer <rev@example.org>"), strings.Count(mbox.String(), "    list@example.org"); n != 15 || m != 15 {
		t.Errorf("--to in %d messages, --cc in %d, want 15 each", n, m)
	}
	stderr.Reset()
	if code := run([]string{"gen", "-v", "12", "--tree", tree, "--to", "not an address"}, &mbox, &stderr); code != 2 || !strings.Contains(stderr.String(), "not a mail address") {
		t.Errorf("bad --to: exit %d, %q", code, stderr.String())
	}
	if code := run([]string{"gen", "-v", "12", "--tree", tree, "--base", "v6.12", "-o", out, "--json"}, &js, &stderr); code != 0 {
		t.Fatalf("--json: exit %d: %s", code, stderr.String())
	}
	var rep struct {
		Version int    `json:"version"`
		Base    string `json:"base"`
		Patches []struct {
			Number int      `json:"number"`
			File   string   `json:"file"`
			To     []string `json:"to"`
		} `json:"patches"`
	}
	if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Version != 12 || rep.Base != "v6.12" || len(rep.Patches) != 14 || rep.Patches[13].File != names[14] {
		t.Errorf("json summary: %+v", rep)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 15 {
		t.Errorf("output directory holds %d entries, want 15 (no temporary files left)", len(ents))
	}
}

// TestGenEditedSpec exports the series description, edits it, and
// generates from the copy: the edit shows in the output; a template that
// names an unknown patch id is bad input (exit 2) named by the template.
func TestGenEditedSpec(t *testing.T) {
	tree := debianTree(t)
	dir := filepath.Join(t.TempDir(), "spec")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"spec", "-o", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("spec: exit %d: %s", code, stderr.String())
	}
	if code := run([]string{"spec", "-o", dir}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "already exists") {
		t.Errorf("spec into an existing directory: exit %d, %q", code, stderr.String())
	}
	p := filepath.Join(dir, "v11", "user-api.patch")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, bytes.Replace(b, []byte("}}unwind_user: Add user space unwinding API{{"), []byte("}}unwind_user: Add the user space unwinding API{{"), 1), 0o644)
	tp := filepath.Join(dir, "files", "kernel", "unwind", "user.c.tmpl")
	c, _ := os.ReadFile(tp)
	os.WriteFile(tp, bytes.Replace(c, []byte("/* stack going in wrong direction? */"), []byte("/* stack going the wrong way? */"), 1), 0o644)
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"gen", "-v", "12", "--tree", tree, "--base", "v6.12", "-v", "11", "--spec", dir, "--stdout"}, &stdout, &stderr); code != 0 {
		t.Fatalf("gen --spec: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Subject: [PATCH v11 01/14] unwind_user: Add the user space unwinding API\n") {
		t.Error("the edited subject is not in the output")
	}
	if !strings.Contains(stdout.String(), "+\t/* stack going the wrong way? */\n") {
		t.Error("the edited template is not in the output")
	}
	os.WriteFile(tp, append(c, []byte("{{if since \"no-such-patch\"}}x\n{{end}}\n")...), 0o644)
	stderr.Reset()
	if code := run([]string{"gen", "-v", "12", "--tree", tree, "--base", "v6.12", "--spec", dir, "--stdout"}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "user.c.tmpl") || !strings.Contains(stderr.String(), `unknown patch id "no-such-patch"`) {
		t.Errorf("unknown id: exit %d, %q", code, stderr.String())
	}
}

// sharedClone makes a git clone --shared of the Debian tree (objects
// borrowed, refs its own) to record branches and commits in.
func sharedClone(t *testing.T) string {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "linux")
	if out, err := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", debianTree(t), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	return clone
}

// repoState is what kpatch must never change in a repository: every ref,
// HEAD, and the index.
func repoState(t *testing.T, repo string) string {
	t.Helper()
	return gitIn(t, repo, "for-each-ref", "--format=%(refname) %(objectname)") + "\nHEAD " +
		gitIn(t, repo, "rev-parse", "HEAD") + "\nindex " + fingerprint(t, filepath.Join(repo, ".git", "index"))
}

// dirState reads every file of an output directory (nil if it does not
// exist; "<dir>" for a subdirectory).
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if st, serr := os.Stat(dir); os.IsNotExist(serr) || (serr == nil && !st.IsDir()) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		if e.IsDir() {
			m[e.Name()] = "<dir>"
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		m[e.Name()] = string(b)
	}
	return m
}

func sameDir(a, b map[string]string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

// previousSeries writes, into dir, a complete series of an earlier run
// (v11 with another recipient, so that every file differs from the next
// run's) and a 15th patch such a run could have left; it returns the files.
func previousSeries(t *testing.T, dir string) map[string]string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-v", "12", "--tree", debianTree(t), "--base", "v6.12", "--to", "earlier@example.org", "-o", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr.String())
	}
	os.WriteFile(filepath.Join(dir, "v11-0015-from-an-earlier-run.patch"), []byte("stale\n"), 0o644)
	return dirState(t, dir)
}

// TestGenRefuses runs kpatch gen on bad input: each gets a one-line error
// naming the cause and what to do, status 1, the tree and its refs stay as
// they were, no branch is created, and -o still holds exactly what it held
// (the previous complete series, or nothing).
func TestGenRefuses(t *testing.T) {
	clone := sharedClone(t)
	// A base where kernel/unwind is a regular file: the series must create
	// kernel/unwind/user.c there.
	idx := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+idx, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
	gitEnv := func(stdin string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", clone}, args...)...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitEnv("", "read-tree", "v6.12")
	blob := gitEnv("a file, not a directory\n", "hash-object", "-w", "--stdin")
	gitEnv("", "update-index", "--add", "--cacheinfo", "100644,"+blob+",kernel/unwind")
	commit := gitEnv("kernel/unwind is a file\n", "commit-tree", gitEnv("", "write-tree"), "-p", "v6.12")
	gitIn(t, clone, "tag", "unwind-is-a-file", commit)
	gitIn(t, clone, "branch", "existing", "v6.12")
	gitIn(t, clone, "branch", "topic", "v6.12")

	plainFile := fakeKernel(t, nil)
	os.WriteFile(filepath.Join(plainFile, "kernel/unwind"), []byte("a file\n"), 0o644)
	plainOK := fakeKernel(t, nil)
	plainDone := fakeKernel(t, nil)
	os.MkdirAll(filepath.Join(plainDone, "kernel/unwind"), 0o755)
	os.WriteFile(filepath.Join(plainDone, "kernel/unwind/user.c"), []byte("// SPDX-License-Identifier: GPL-2.0\n"), 0o644)

	// No case may change the clone's refs, HEAD or index: each is
	// compared with the state before the first case.
	cloneRefs := repoState(t, clone)

	const none, previous = "none", "previous"
	tests := []struct {
		name  string
		tree  string
		args  []string
		setup func(t *testing.T, out string) // what -o holds before
		want  []string                       // substrings of the one-line error
		keeps string                         // -o afterwards: none, previous, or "file"
	}{
		// Item 4: branch names git refuses.
		{"branch a..b", clone, []string{"--branch", "a..b"}, previousOut, []string{`--branch "a..b"`, "not a valid branch name", `contains ".."`, "git check-ref-format --branch"}, previous},
		{"branch -x", clone, []string{"--branch=-x"}, nil, []string{`--branch "-x"`, "starts with -"}, none},
		{"branch a b.lock", clone, []string{"--branch", "a b.lock"}, nil, []string{`' '`}, none},
		{"branch x:y", clone, []string{"--branch", "x:y"}, nil, []string{`':'`}, none},
		{"branch x~1", clone, []string{"--branch", "x~1"}, nil, []string{`'~'`}, none},
		{"branch HEAD", clone, []string{"--branch", "HEAD"}, nil, []string{"HEAD names the checked-out commit"}, none},
		{"branch x.lock", clone, []string{"--branch", "x.lock"}, nil, []string{"ends with .lock"}, none},
		{"branch a/", clone, []string{"--branch", "a/"}, nil, []string{"empty component"}, none},
		{"branch @{-1}", clone, []string{"--branch", "@{-1}"}, nil, []string{`"@{"`}, none},
		{"branch exists", clone, []string{"--base", "v6.12", "--branch", "existing"}, previousOut, []string{"--branch existing", "branch already exists", "git branch -D"}, previous},
		{"branch below a branch", clone, []string{"--base", "v6.12", "--branch", "topic/v11"}, nil, []string{"refs/heads/topic exists", "cannot keep both", "choose another name"}, none},
		{"branch on a plain directory", plainOK, []string{"--branch", "b", "--base", "v6.12"}, previousOut, []string{"--branch b", "read as a plain directory, not a git repository", "drop --branch"}, previous},
		// Item 5: the output cannot be written, so no branch either.
		{"-o a regular file, with --branch", clone, []string{"--base", "v6.12", "--branch", "b5"}, func(t *testing.T, out string) { os.WriteFile(out, []byte("mine\n"), 0o644) },
			[]string{"-o ", "not a directory", "give a directory, or a path that does not exist yet"}, "file"},
		// Item 8: files kpatch did not write.
		{"-o holds other files", clone, []string{"--base", "v6.12", "--branch", "b8"}, func(t *testing.T, out string) {
			previousOut(t, out)
			os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine\n"), 0o644)
		}, []string{"holds files that are not kpatch series files (notes.txt)", "move them away, give another -o, or --force"}, previous},
		// Item 6: patch 7 replaced by a non-empty directory; kept with --force.
		{"--force with a directory where patch 7 goes", clone, []string{"--base", "v6.12", "--force", "--branch", "b6"}, func(t *testing.T, out string) {
			previousOut(t, out)
			for name := range prevFiles {
				if strings.HasPrefix(name, "v12-0007-") {
					os.Remove(filepath.Join(out, name))
					os.MkdirAll(filepath.Join(out, name, "sub"), 0o755)
				}
			}
		}, []string{"v12-0007-", "is in the way of the new series", "move it away"}, previous},
		// Item 9: a created file's path collides with the base.
		{"kernel/unwind is a file in the base", clone, []string{"--base", "unwind-is-a-file", "--branch", "b9"}, previousOut,
			[]string{"patch 1 (user-api) creates kernel/unwind/", "kernel/unwind is a file in --base unwind-is-a-file where the series needs a directory", "choose another --base"}, previous},
		{"kernel/unwind is a file in a plain directory", plainFile, []string{"--base", "v6.12"}, previousOut,
			[]string{"patch 1 (user-api) creates kernel/unwind/", "kernel/unwind is a file in " + plainFile, "give another --tree"}, previous},
		// --plain: advice for a directory, not a revision.
		{"plain directory with the series", plainDone, []string{"--base", "v6.12"}, previousOut,
			[]string{"kernel/unwind/user.c already exists in " + plainDone, "the tree already has the series", "give the directory of an older kernel with --tree", "remove kernel/unwind/user.c there"}, previous},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "outgoing")
			if tt.setup != nil {
				tt.setup(t, out)
			}
			before := dirState(t, out)
			fileBefore, _ := os.ReadFile(out)
			treeBefore := fingerprint(t, tt.tree)
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"gen", "-v", "12", "--tree", tt.tree, "-o", out}, tt.args...), &stdout, &stderr)
			msg := stderr.String()
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, msg)
			}
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "kpatch gen: ") || stdout.Len() > 0 {
				t.Errorf("want one line on stderr starting with \"kpatch gen: \" and nothing on stdout, got %q, %q", msg, stdout.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if fingerprint(t, tt.tree) != treeBefore {
				t.Error("the tree changed")
			}
			if tt.tree == clone && repoState(t, clone) != cloneRefs {
				t.Error("the refs, HEAD or the index changed")
			}
			after := dirState(t, out)
			switch tt.keeps {
			case none:
				if after != nil {
					t.Errorf("-o %s was created", out)
				}
			case previous:
				if before == nil || !sameDir(after, before) {
					t.Errorf("-o holds %d files, want the previous %d, unchanged", len(after), len(before))
				}
			case "file":
				if b, _ := os.ReadFile(out); string(b) != string(fileBefore) {
					t.Error("the file -o names changed")
				}
			}
			if left := kpatchTemps(t, out); len(left) > 0 {
				t.Errorf("left %v beside -o", left)
			}
		})
	}
}

func previousOut(t *testing.T, out string) {
	t.Helper()
	prevOnce.Do(func() { prevFiles = previousSeries(t, t.TempDir()) })
	if len(prevFiles) != 16 {
		t.Fatalf("the previous series has %d files", len(prevFiles))
	}
	os.MkdirAll(out, 0o755)
	for name, text := range prevFiles {
		if err := os.WriteFile(filepath.Join(out, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	prevOnce  sync.Once
	prevFiles map[string]string
)

// kpatchTemps lists the temporary directories of package outdir beside out.
func kpatchTemps(t *testing.T, out string) []string {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Dir(out))
	var left []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".kpatch-") {
			left = append(left, e.Name())
		}
	}
	return left
}

// TestGenBranchRetry: a run that fails creates no branch, so the same
// command succeeds once the cause is gone (the output cannot be written; the
// file list cannot be printed, after the series is written).
func TestGenBranchRetry(t *testing.T) {
	clone := sharedClone(t)
	dir := t.TempDir()
	afile := filepath.Join(dir, "afile")
	os.WriteFile(afile, []byte("mine\n"), 0o644)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	out := filepath.Join(dir, "out")
	tests := []struct {
		name   string
		args   []string
		stdout io.Writer
		want   string
		code   int
	}{
		{"-o is a regular file", []string{"-o", afile}, new(bytes.Buffer), "not a directory", 2},
		{"the file list cannot be written", []string{"-o", out}, full, "listing the files written: write /dev/full: no space left on device", 1},
		{"the JSON summary cannot be written", []string{"-o", out, "--json"}, full, "writing the JSON summary: write /dev/full: no space left on device", 1},
		{"the mbox cannot be written", []string{"--stdout"}, full, "writing the mbox to standard output: write /dev/full: no space left on device", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refs := repoState(t, clone)
			var stderr bytes.Buffer
			args := append([]string{"gen", "-v", "12", "--tree", clone, "--base", "v6.12", "--branch", "retry"}, tt.args...)
			if code := run(args, tt.stdout, &stderr); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("exit %d, %q; want %d and %q", code, stderr.String(), tt.code, tt.want)
			}
			if strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("want one line, got %q", stderr.String())
			}
			if repoState(t, clone) != refs {
				t.Fatal("a failed run changed the refs")
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-v", "12", "--tree", clone, "--base", "v6.12", "--branch", "retry", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("the retry: exit %d: %s", code, stderr.String())
	}
	if n := gitIn(t, clone, "rev-list", "--count", "v6.12..retry"); n != "14" {
		t.Errorf("the branch has %s commits, want 14", n)
	}
	if b, _ := os.ReadFile(afile); string(b) != "mine\n" {
		t.Error("the regular file given as -o changed")
	}
}

// TestGenOutputDir: a rerun replaces the series of an earlier run, its
// 15th patch included; --force keeps the user's other files beside the
// new series; the listing names exactly the files in -o.
func TestGenOutputDir(t *testing.T) {
	tree := debianTree(t)
	tests := []struct {
		name  string
		args  []string
		setup func(t *testing.T, out string)
		extra map[string]string // files besides the series afterwards
	}{
		{"new directory", nil, nil, nil},
		{"previous series with a 15th patch", nil, previousOut, nil},
		{"older kpatch's temporary files", nil, func(t *testing.T, out string) {
			previousOut(t, out)
			os.WriteFile(filepath.Join(out, ".kpatch-1234.tmp"), []byte("half a patch"), 0o644)
		}, nil},
		{"directories of a killed run beside", nil, func(t *testing.T, out string) {
			previousOut(t, out)
			os.MkdirAll(filepath.Join(filepath.Dir(out), ".outgoing.kpatch-new-99", "x"), 0o755)
		}, nil},
		{"--force keeps other files", []string{"--force"}, func(t *testing.T, out string) {
			previousOut(t, out)
			os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine\n"), 0o644)
			os.Mkdir(filepath.Join(out, "drafts"), 0o755)
		}, map[string]string{"notes.txt": "mine\n", "drafts": "<dir>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "outgoing")
			if tt.setup != nil {
				tt.setup(t, out)
			}
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"gen", "-v", "12", "--tree", tree, "--base", "v6.12", "-o", out}, tt.args...), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			got := dirState(t, out)
			listed := strings.Fields(stdout.String())
			if len(listed) != 15 {
				t.Fatalf("listed %d files, want 15", len(listed))
			}
			for _, f := range listed {
				name := filepath.Base(f)
				if filepath.Dir(f) != out || !strings.HasPrefix(got[name], "From ") || strings.Contains(got[name], "earlier@example.org") {
					t.Errorf("%s is not a file of the new series", f)
				}
				delete(got, name)
			}
			if !sameDir(got, tt.extra) && !(len(got) == 0 && tt.extra == nil) {
				t.Errorf("-o also holds %v, want %v", got, tt.extra)
			}
			if left := kpatchTemps(t, out); len(left) > 0 {
				t.Errorf("left %v beside -o", left)
			}
		})
	}
}

// TestMain lets TestGenKilled run kpatch in a child process: with
// KPATCH_TEST_ARGS set, the test binary is kpatch with those arguments.
func TestMain(m *testing.M) {
	if args := os.Getenv("KPATCH_TEST_ARGS"); args != "" {
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	code := m.Run()
	testenv.RemoveKpatchBinary() // the binary the signal tests built
	gittest.RemoveTemplates()
	os.Exit(code)
}

// TestGenKilled SIGKILLs kpatch gen at times spread from 70% to 110% of
// the time a run takes, over and over, with the previous series in -o: after every
// kill -o holds the previous series or the new one, whole, and the next
// run succeeds and clears what the killed ones left. (Package outdir's
// TestKill stops a run at each step of the write exactly; this checks the
// same from the outside, wherever the kills land.)
func TestGenKilled(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tree := debianTree(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "outgoing")
	gen := func(o string) *exec.Cmd {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), "KPATCH_TEST_ARGS="+strings.Join([]string{"gen", "-v", "12", "--tree", tree, "--base", "v6.12", "-o", o}, "\x1f"))
		return cmd
	}
	// One whole run gives the new series and the time a run takes.
	start := time.Now()
	if b, err := gen(filepath.Join(dir, "new")).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, b)
	}
	took := time.Since(start)
	newSeries := dirState(t, filepath.Join(dir, "new"))
	previousOut(t, out)
	prev := dirState(t, out)
	counts := map[string]int{}
	const kills = 10
	for i := 0; i < kills; i++ {
		cmd := gen(out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(took*7/10 + took*time.Duration(i)*4/(10*kills)) // 70% to 110% of a run
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		got := dirState(t, out)
		switch {
		case err == nil:
			counts["finished before the kill"]++
			if !sameDir(got, newSeries) {
				t.Fatalf("kill %d: the run finished, but -o does not hold the new series", i)
			}
		case sameDir(got, prev):
			counts["previous series"]++
		case sameDir(got, newSeries):
			counts["new series"]++
		default:
			t.Fatalf("kill %d: -o holds %d files, neither the previous series nor the new one", i, len(got))
		}
		if !sameDir(got, prev) {
			os.RemoveAll(out)
			previousOut(t, out)
		}
	}
	t.Logf("a run takes %v; after %d kills -o held: %v", took.Round(time.Millisecond), kills, counts)
	if b, err := gen(out).CombinedOutput(); err != nil {
		t.Fatalf("the run after the kills: %v\n%s", err, b)
	}
	if got := dirState(t, out); !sameDir(got, newSeries) {
		t.Errorf("the run after the kills left %d files, not the new series", len(got))
	}
	if left := kpatchTemps(t, out); len(left) > 0 {
		t.Errorf("the run after the kills left %v beside -o", left)
	}
}
