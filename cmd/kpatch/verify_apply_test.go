package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/outdir"
)

// refusedSeries writes, with the real git, five patches that git am
// refuses on Debian's v6.12 and returns their directory: one creates
// kernel/fork.c (it exists), one deletes a file v6.12 lacks, one deletes
// COPYING with another content, one renames a file v6.12 lacks, one makes
// a file v6.12 lacks executable.
func refusedSeries(t *testing.T) string {
	t.Helper()
	gittest.Require(t)
	repo := t.TempDir()
	write := func(path, content string) {
		p := filepath.Join(repo, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(subject string) {
		gittest.Run(t, repo, "add", "-A")
		gittest.Run(t, repo, "commit", "-q", "-m", subject+"\n\nA change git am refuses on v6.12.\n\nSigned-off-by: t <t@example.com>")
	}
	gittest.Run(t, repo, "init", "-q")
	write("kernel/kpatch-missing.c", "int missing;\n")
	write("COPYING", "Not the kernel's COPYING.\n")
	write("kernel/kpatch-old.c", "int old;\nint older;\nint oldest;\n")
	write("scripts/kpatch-tool.sh", "#!/bin/sh\necho tool\n")
	commit("base")
	write("kernel/fork.c", "int forked;\n")
	commit("fork: create a file that exists")
	os.Remove(filepath.Join(repo, "kernel/kpatch-missing.c"))
	commit("kernel: delete a file that does not exist")
	os.Remove(filepath.Join(repo, "COPYING"))
	commit("COPYING: delete a file whose content differs")
	gittest.Run(t, repo, "mv", "kernel/kpatch-old.c", "kernel/kpatch-new.c")
	commit("kernel: rename a file that does not exist")
	if err := os.Chmod(filepath.Join(repo, "scripts/kpatch-tool.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit("scripts: make a file that does not exist executable")
	out := filepath.Join(t.TempDir(), "series")
	gittest.Run(t, repo, "format-patch", "-q", "-o", out, "HEAD~5")
	return out
}

// jsonFinding is a finding of kpatch verify --json.
type jsonFinding struct {
	ID       string
	Patch    int
	File     string
	Line     int
	Message  string
	Severity string
}

// verifyJSON runs kpatch verify with args and --json and returns its exit
// status and the findings of id.
func verifyJSON(t *testing.T, id string, args ...string) (int, []jsonFinding) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"verify", "--json", "--build-dir", "none"}, args...), &out, &errb)
	var rep struct{ Findings []jsonFinding }
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("kpatch verify %v: exit %d, %v\n%s", args, code, err, errb.String())
	}
	var fs []jsonFinding
	for _, f := range rep.Findings {
		if f.ID == id {
			fs = append(fs, f)
		}
	}
	return code, fs
}

// gitRefuses applies patch to v6.12 of the Debian tree with the real git
// (git apply --cached --check, as git am checks it, against an index of
// v6.12 in a temporary file: the tree is not touched) and returns what git
// says; it fails the test if git takes the patch.
func gitRefuses(t *testing.T, tree, patch string) string {
	t.Helper()
	index := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+index)
	rt := exec.Command("git", "-C", tree, "read-tree", "v6.12")
	rt.Env = env
	if out, err := rt.CombinedOutput(); err != nil {
		t.Fatalf("git read-tree: %v\n%s", err, out)
	}
	ap := exec.Command("git", "-C", tree, "apply", "--cached", "--check", patch)
	ap.Env = env
	out, err := ap.CombinedOutput()
	if err == nil {
		t.Fatalf("git apply --cached --check takes %s", filepath.Base(patch))
	}
	return string(out)
}

// TestVerifyRefusesWhatGitAmRefuses: with --tree, each of five patches
// that git am refuses (the real git says so first) is one PATCH_APPLY
// error at its patch, in git's words, and verify exits 1.
func TestVerifyRefusesWhatGitAmRefuses(t *testing.T) {
	tree := debianTree(t)
	dir := refusedSeries(t)
	mails, _ := filepath.Glob(filepath.Join(dir, "*.patch"))
	if len(mails) != 5 {
		t.Fatalf("%d patches written, want 5", len(mails))
	}
	want := []string{
		"kernel/fork.c: already exists in index",
		"kernel/kpatch-missing.c: does not exist in index",
		"patch failed: COPYING:1",
		"kernel/kpatch-old.c: does not exist in index",
		"scripts/kpatch-tool.sh: does not exist in index",
	}
	for i, m := range mails {
		if got := gitRefuses(t, tree, m); !strings.Contains(got, want[i]) {
			t.Fatalf("git on %s says %q, not %q", filepath.Base(m), got, want[i])
		}
	}
	code, fs := verifyJSON(t, "PATCH_APPLY", "--tree", tree, "--base", "v6.12", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for i, w := range want {
		n := 0
		for _, f := range fs {
			if f.Patch == i+1 && f.Severity == "error" && strings.Contains(f.Message, w) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("patch %d: %d PATCH_APPLY errors saying %q; all: %+v", i+1, n, w, fs)
		}
	}
}

// TestVerifyRefusesInvalidPath: a patch creating ../../outside.c is a
// PATCH_APPLY error with git's words ("invalid path"), with and without
// --tree, as git am refuses it on any tree.
func TestVerifyRefusesInvalidPath(t *testing.T) {
	gittest.Require(t)
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	gittest.Run(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	if err := os.WriteFile(filepath.Join(repo, "outside.c"), []byte("int outside;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "add", "outside.c")
	gittest.Run(t, repo, "commit", "-q", "-m", "escape: add a file outside the tree\n\nSigned-off-by: t <t@example.com>")
	mail := string(gittest.Run(t, repo, "format-patch", "-1", "--stdout"))
	mail = strings.ReplaceAll(mail, "a/outside.c", "a/../../outside.c")
	mail = strings.ReplaceAll(mail, "b/outside.c", "b/../../outside.c")
	path := filepath.Join(t.TempDir(), "outside.mbox")
	if err := os.WriteFile(path, []byte(mail), 0o644); err != nil {
		t.Fatal(err)
	}
	// git am's verdict first
	am := t.TempDir()
	gittest.Run(t, am, "init", "-q")
	gittest.Run(t, am, "commit", "-q", "--allow-empty", "-m", "base")
	cmd := exec.Command("git", "am", path)
	cmd.Dir, cmd.Env = am, gittest.Environ(am)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "invalid path '../../outside.c'") {
		t.Fatalf("git am: %v\n%s", err, out)
	}
	for _, args := range [][]string{{path}, {"--tree", debianTree(t), "--base", "v6.12", path}} {
		code, fs := verifyJSON(t, "PATCH_APPLY", args...)
		if code != 1 || len(fs) != 1 || fs[0].Patch != 1 || !strings.Contains(fs[0].Message, "invalid path '../../outside.c'") {
			t.Errorf("verify %v: exit %d, PATCH_APPLY %+v", args, code, fs)
		}
	}
}

// preparedTree makes a minimal prepared x86_64 build tree (make O=DIR:
// .config and include/generated/autoconf.h) at dir.
func preparedTree(t *testing.T, dir string) {
	t.Helper()
	for name, data := range map[string]string{
		".config":                      "#\n# Linux/x86 6.12 Kernel Configuration\n#\nCONFIG_X86_64=y\nCONFIG_64BIT=y\n",
		"include/generated/autoconf.h": "#define CONFIG_X86_64 1\n#define CONFIG_64BIT 1\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVerifyBuildDirBusy: --build-dir DIR holding several trees passes
// by those a kpatch test build is building in, with a note, as the
// default cache trees are; a busy tree named by itself, or a DIR whose
// every tree is busy, is refused (exit 2).
func TestVerifyBuildDirBusy(t *testing.T) {
	gittest.Require(t)
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	gittest.Run(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("A readme.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "add", "README")
	gittest.Run(t, repo, "commit", "-q", "-m", "docs: add a readme\n\nSay what it is.\n\nSigned-off-by: t <t@example.com>")
	mbox := filepath.Join(t.TempDir(), "readme.mbox") // a series of one patch without C
	if err := os.WriteFile(mbox, gittest.Run(t, repo, "format-patch", "-1", "--stdout"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"matrix-i386", "matrix-x86_64"} {
		preparedTree(t, filepath.Join(dir, name))
	}
	unlock, err := outdir.Lock(context.Background(), filepath.Join(dir, "matrix-i386", ".lock"), nil, "matrix-i386")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	var out, errb bytes.Buffer
	code := run([]string{"verify", "--build-dir", dir, mbox}, &out, &errb)
	if code == 2 || !strings.Contains(out.String(), "note: build tree matrix-i386 passed by: a kpatch test build is building in it") {
		t.Errorf("a directory with one busy tree of two: exit %d\n%s%s", code, errb.String(), out.String())
	}
	for _, d := range []string{filepath.Join(dir, "matrix-i386"), filepath.Join(t.TempDir(), "only")} {
		if filepath.Base(d) == "only" {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			preparedTree(t, filepath.Join(d, "matrix-x86_64"))
			u, err := outdir.Lock(context.Background(), filepath.Join(d, "matrix-x86_64", ".lock"), nil, "matrix-x86_64")
			if err != nil {
				t.Fatal(err)
			}
			defer u()
		}
		out.Reset()
		errb.Reset()
		code = run([]string{"verify", "--build-dir", d, mbox}, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "a kpatch test build is building in it") || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("--build-dir %s (busy): exit %d, %q", d, code, errb.String())
		}
	}
}

// TestVerifyDirFileCollision: a patch creating a file under a path that
// is a file of the tree (COPYING/kpatch.c) or where a directory of it is
// (kernel/sched) passes git apply --check, but git am dies writing it
// (plumbing/gitapply's TestApplyDirFileDifferential compares the words
// with git's); verify said nothing of it, and now gives one PATCH_APPLY
// error in git's words.
func TestVerifyDirFileCollision(t *testing.T) {
	tree := debianTree(t)
	gittest.Require(t)
	for _, tc := range []struct{ path, want string }{
		{"COPYING/kpatch.c", "unable to write file 'COPYING/kpatch.c' mode 100644: Not a directory"},
		{"kernel/sched", "unable to write file 'kernel/sched' mode 100644: Directory not empty"},
	} {
		repo := t.TempDir()
		gittest.Run(t, repo, "init", "-q")
		gittest.Run(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
		p := filepath.Join(repo, tc.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("int kpatch;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, repo, "add", "-A")
		gittest.Run(t, repo, "commit", "-q", "-m", "kernel: add a file where the tree has another\n\nA file git am cannot write.\n\nSigned-off-by: t <t@example.com>")
		mbox := filepath.Join(t.TempDir(), "one.mbox")
		if err := os.WriteFile(mbox, gittest.Run(t, repo, "format-patch", "-1", "--stdout"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, fs := verifyJSON(t, "PATCH_APPLY", "--tree", tree, "--base", "v6.12", mbox)
		if code != 1 || len(fs) != 1 || !strings.Contains(fs[0].Message, tc.want) {
			t.Errorf("%s: exit %d, PATCH_APPLY %+v; want one saying %q", tc.path, code, fs, tc.want)
		}
	}
}
