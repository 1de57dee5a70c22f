package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"kpatch/kerneltree"
)

var (
	treeOnce sync.Once
	treeDir  string
	treeErr  error
)

func debianTree(t *testing.T) string {
	t.Helper()
	treeOnce.Do(func() { treeDir, treeErr = kerneltree.Debian612(context.Background(), os.Stderr) })
	if treeErr != nil {
		t.Fatal(treeErr)
	}
	return treeDir
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

// fakeKernel copies the files the series reads from the Debian tree into
// a plain directory, after passing each through edit (if not nil).
func fakeKernel(t *testing.T, edit func(path string, b []byte) []byte) string {
	src := debianTree(t)
	dir := t.TempDir()
	for _, p := range []string{"MAINTAINERS", "Kconfig", "arch/Kconfig", "arch/x86/Kconfig", "kernel/Makefile",
		"include/asm-generic/Kbuild", "include/linux/sched.h", "include/linux/entry-common.h", "kernel/fork.c",
		"kernel/exit.c", "arch/x86/events/core.c", "arch/x86/include/asm/ptrace.h", "arch/x86/kernel/ptrace.c"} {
		b, err := os.ReadFile(filepath.Join(src, p))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			b = edit(p, b)
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGenErrors(t *testing.T) {
	notKernel := t.TempDir()
	os.WriteFile(filepath.Join(notKernel, "README"), []byte("not linux\n"), 0o644)
	hasSeries := fakeKernel(t, nil)
	os.MkdirAll(filepath.Join(hasSeries, "kernel/unwind"), 0o755)
	os.WriteFile(filepath.Join(hasSeries, "kernel/unwind/user.c"), []byte("// SPDX-License-Identifier: GPL-2.0\n"), 0o644)
	noAnchor := fakeKernel(t, func(p string, b []byte) []byte {
		if p == "include/linux/entry-common.h" {
			return bytes.Replace(b, []byte("#include <linux/kmsan.h>\n"), nil, 1)
		}
		return b
	})
	tests := []struct {
		name string
		tree string
		args []string
		want []string // substrings of the one-line error
	}{
		{"not a kernel tree", notKernel, nil, []string{"not a Linux kernel tree", "no MAINTAINERS", "--tree"}},
		{"unknown revision", debianTree(t), []string{"--base", "v9.99"}, []string{`"v9.99"`, "unknown revision", "--base"}},
		{"tree already has the series", hasSeries, []string{"--base", "v6.17"}, []string{"kernel/unwind/user.c already exists", "already has the series", "older --base"}},
		{"missing anchor", noAnchor, []string{"--base", "v6.12"}, []string{"patch 5 (cache)", "include/linux/entry-common.h", `"include-after <linux/kmsan.h>"`, "anchor not found"}},
		{"unknown revision of the series", debianTree(t), []string{"--base", "v6.12", "-v", "9"}, []string{"v9", "no such revision", "v11"}},
		{"bad spec directory", debianTree(t), []string{"--base", "v6.12", "--spec", "/nonexistent"}, []string{"--spec /nonexistent", "not a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "outgoing")
			before := fingerprint(t, tt.tree)
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"gen", "--tree", tt.tree, "-o", out}, tt.args...), &stdout, &stderr)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, stderr.String())
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
	args := []string{"gen", "--tree", clone, "--base", "v6.12", "--branch", "unwind-v11", "-o", filepath.Join(t.TempDir(), "out")}
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
	if code := run(args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "branch already exists") {
		t.Errorf("second --branch: exit %d, %q", code, stderr.String())
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"gen", "--help"}, {"tree", "--help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Errorf("%v: exit %d", args, code)
		}
		text := stdout.String() + stderr.String()
		if args[0] == "gen" {
			for _, f := range []string{"-tree", "-base", "-v", "-spec", "-o", "-stdout", "-branch", "-plain", "-json"} {
				if !strings.Contains(text, "  "+f) {
					t.Errorf("gen --help does not explain %s", f)
				}
			}
		}
	}
}

// TestGenOutputs checks that --stdout is the files of -o concatenated, as
// with git format-patch, and that --json lists what was written.
func TestGenOutputs(t *testing.T) {
	tree := debianTree(t)
	out := filepath.Join(t.TempDir(), "out")
	var files, mbox, js, stderr bytes.Buffer
	if code := run([]string{"gen", "--tree", tree, "--base", "v6.12", "-o", out}, &files, &stderr); code != 0 {
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
	if code := run([]string{"gen", "--tree", tree, "--base", "v6.12", "--stdout"}, &mbox, &stderr); code != 0 {
		t.Fatalf("--stdout: exit %d: %s", code, stderr.String())
	}
	if mbox.String() != cat.String() {
		t.Error("--stdout differs from the files of -o")
	}
	// --to and --cc add recipients to every message.
	mbox.Reset()
	if code := run([]string{"gen", "--tree", tree, "--base", "v6.12", "--stdout", "--to", "Reviewer <rev@example.org>", "--cc", "list@example.org"}, &mbox, &stderr); code != 0 {
		t.Fatalf("--to/--cc: exit %d: %s", code, stderr.String())
	}
	if n, m := strings.Count(mbox.String(), "    Reviewer <rev@example.org>"), strings.Count(mbox.String(), "    list@example.org"); n != 15 || m != 15 {
		t.Errorf("--to in %d messages, --cc in %d, want 15 each", n, m)
	}
	stderr.Reset()
	if code := run([]string{"gen", "--tree", tree, "--to", "not an address"}, &mbox, &stderr); code != 2 || !strings.Contains(stderr.String(), "not a mail address") {
		t.Errorf("bad --to: exit %d, %q", code, stderr.String())
	}
	if code := run([]string{"gen", "--tree", tree, "--base", "v6.12", "-o", out, "--json"}, &js, &stderr); code != 0 {
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
// names an unknown patch id fails with the template's name.
func TestGenEditedSpec(t *testing.T) {
	tree := debianTree(t)
	dir := filepath.Join(t.TempDir(), "spec")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"spec", "-o", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("spec: exit %d: %s", code, stderr.String())
	}
	if code := run([]string{"spec", "-o", dir}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "already exists") {
		t.Errorf("spec into an existing directory: exit %d, %q", code, stderr.String())
	}
	p := filepath.Join(dir, "v11", "01-user-api.patch")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, bytes.Replace(b, []byte("Subject: unwind_user: Add user space unwinding API"), []byte("Subject: unwind_user: Add the user space unwinding API"), 1), 0o644)
	tp := filepath.Join(dir, "files", "kernel", "unwind", "user.c.tmpl")
	c, _ := os.ReadFile(tp)
	os.WriteFile(tp, bytes.Replace(c, []byte("/* stack going in wrong direction? */"), []byte("/* stack going the wrong way? */"), 1), 0o644)
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"gen", "--tree", tree, "--base", "v6.12", "-v", "11", "--spec", dir, "--stdout"}, &stdout, &stderr); code != 0 {
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
	if code := run([]string{"gen", "--tree", tree, "--base", "v6.12", "--spec", dir, "--stdout"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "user.c.tmpl") || !strings.Contains(stderr.String(), `unknown patch id "no-such-patch"`) {
		t.Errorf("unknown id: exit %d, %q", code, stderr.String())
	}
}
