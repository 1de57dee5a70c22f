package verify

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/kernelsrc"
)

// offsetPatch writes, with the real git, a patch to kernel/exit.c made on
// a tree whose exit.c lacks 20 of v6.12's lines before do_exit(): on
// v6.12 its hunk, which starts inside do_exit(), applies 20 lines further
// on. It returns the mail and v6.12's exit.c.
func offsetPatch(t *testing.T, tree *kernelsrc.Tree) (mail string, exit []byte) {
	t.Helper()
	gittest.Require(t)
	exit, err := tree.ReadFile("kernel/exit.c")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(exit), "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "void __noreturn do_exit(long code)") {
			at = i
		}
	}
	if at < 100 {
		t.Fatal("no do_exit() in kernel/exit.c")
	}
	author := append(append([]string{}, lines[:40]...), lines[60:]...) // 20 lines fewer
	at -= 20
	changed := append([]string{}, author[:at+3]...) // after "{" and the first declaration
	changed = append(changed, "\tpr_debug(\"kpatch: exiting\\n\");\n")
	changed = append(changed, author[at+3:]...)
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	p := filepath.Join(repo, "kernel", "exit.c")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, content := range [][]string{author, changed} {
		if err := os.WriteFile(p, []byte(strings.Join(content, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, repo, "add", ".")
		gittest.Run(t, repo, "commit", "-q", "-m", []string{"base", "exit: say when a task exits\n\nSay it.\n\nSigned-off-by: t <t@example.com>"}[i])
	}
	return string(gittest.Run(t, repo, "format-patch", "-1", "--stdout")), exit
}

// TestApplyAtOffset: a hunk that git applies at an offset is no
// PATCH_APPLY; its lines are numbered where git places them (the real
// git apply -v says where); the file's content after the patch is known,
// so a hunk starting inside a function is read within the whole file (no
// C_EVAL).
func TestApplyAtOffset(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	mail, exit := offsetPatch(t, tree)
	// git's verdict, on v6.12's exit.c in a scratch directory
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "kernel", "exit.c"), exit, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "apply", "--check", "-v")
	cmd.Dir, cmd.Env, cmd.Stdin = work, append(gittest.Environ(work), "GIT_CEILING_DIRECTORIES="+filepath.Dir(work)), strings.NewReader(mail)
	out, err := cmd.CombinedOutput()
	m := regexp.MustCompile(`Hunk #1 succeeded at (\d+) \(offset 20 lines\)\.`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("git apply -v: %v\n%s", err, out)
	}
	at, _ := strconv.Atoi(string(m[1]))

	path := filepath.Join(t.TempDir(), "exit.mbox")
	if err := os.WriteFile(path, []byte(mail), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadMail(path, tree)
	if err != nil {
		t.Fatal(err)
	}
	f := s.Patches[0].Files[0]
	if !f.Known || len(f.Added) != 1 || f.Added[0].N != at+3 {
		t.Fatalf("known %v, added %+v; git places the hunk at %d (its added line at %d)", f.Known, f.Added, at, at+3)
	}
	newLines := strings.Split(string(f.New), "\n")
	if got := newLines[f.Added[0].N-1]; got != f.Added[0].Text || !bytes.Equal(f.Old, exit) {
		t.Errorf("line %d of the result is %q, not the added line", f.Added[0].N, got)
	}
	for _, fd := range Run(s, Options{}) {
		if fd.ID == "PATCH_APPLY" || fd.ID == "C_EVAL" && fd.File == "kernel/exit.c" {
			t.Errorf("%s %s: %s", fd.ID, fd.Where(), fd.Message)
		}
	}
}

// TestCreatedFileHunkFails: without a tree, a hunk that does not apply to
// the file an earlier patch of the series created is PATCH_APPLY at the
// hunk, in git's words (git am refuses it on any base).
func TestCreatedFileHunkFails(t *testing.T) {
	s, err := ReadMail("testdata/mail/noapply.mbox", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := only(Run(s, Options{}), "PATCH_APPLY")
	if len(got) != 1 || got[0].Patch != 2 || got[0].Line != 56 || // its "@@ -2,4 +2,4 @@"
		!strings.Contains(got[0].Message, `of kernel/demo.c does not apply to the file as patch 1 left it ("error: patch failed: kernel/demo.c:2"`) {
		t.Errorf("PATCH_APPLY %+v", got)
	}
	if f := s.Patches[1].Files[0]; !f.Known || !bytes.Equal(f.New, s.Patches[0].Files[0].New) {
		t.Errorf("patch 2 leaves kernel/demo.c as patch 1 made it: known %v, %q", f.Known, f.New)
	}
}

// TestKnownWithTree: with a tree every file of every patch of real series
// has its content known after the patch (the patch applied as git
// applies it, or left out where git refuses it): none is read from its
// hunks, and with a build tree none is passed by for want of --tree.
func TestKnownWithTree(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, fs := range testenv.ForeignSeries(t) {
		s, err := ReadMail(fs.Path, tree)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.Patches {
			for _, f := range p.Files {
				if !f.Known {
					t.Errorf("%s patch %d: %s read from its hunks", fs.Name, p.Number, f.Path)
				}
			}
		}
		if fs.Name != "futex2" { // refuses hunks of two files: read with a build tree
			continue
		}
		// Each C file goes the build tree's way (the fake tree's flags fail
		// on real files, which is another reason); without --tree the
		// files the series does not create are said to need it.
		bt := fakeBuildTree(t)
		for _, withTree := range []bool{true, false} {
			in := s
			if !withTree {
				if in, err = ReadMail(fs.Path, nil); err != nil {
					t.Fatal(err)
				}
			}
			findings := Run(in, Options{BuildTrees: []*BuildTree{bt}, Ignore: []string{"SPELLING"}})
			reads, asked := NewReport(in, findings).CRead, 0
			for _, cr := range reads {
				if strings.Contains(cr.Why, "give the base tree with --tree") {
					asked++
				}
			}
			if len(reads) == 0 || withTree && asked > 0 || !withTree && asked == 0 {
				t.Errorf("with tree %v: %d of %d C files read asking for --tree: %+v", withTree, asked, len(reads), reads)
			}
		}
	}
}
