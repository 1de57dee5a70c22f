package verify

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/cache"
	"kpatch/plumbing/kernelsrc"
)

// linux61Tarball is Debian's linux-source-6.1: the kernel's merged code
// of 6.1, which with 6.12's makes the merged-code corpus.
const linux61Tarball = "/usr/src/linux-source-6.1.tar.xz"

// linux61File returns path as Linux 6.1 has it: from the tree
// scripts/merged-corpus.sh unpacks in the cache, else from Debian's
// tarball (a file at a time, kept in the cache).
func linux61File(t testing.TB, path string) []byte {
	t.Helper()
	root, err := cache.Dir()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(root, "merged-corpus", "linux-6.1"), filepath.Join(root, "merged-corpus", "files-6.1")} {
		if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil && strings.HasSuffix(dir, "linux-6.1") {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, path)); err == nil {
			return b
		}
	}
	if _, err := os.Stat(linux61Tarball); err != nil {
		testenv.Missing(t, "Debian's linux-source-6.1 is not installed", "apt-get install linux-source-6.1")
	}
	out, err := exec.Command("tar", "-xJOf", linux61Tarball, "linux-source-6.1/"+path).Output()
	if err != nil {
		t.Fatalf("tar: %s from %s: %v", path, linux61Tarball, err)
	}
	keep := filepath.Join(root, "merged-corpus", "files-6.1", path)
	if os.MkdirAll(filepath.Dir(keep), 0o755) == nil {
		os.WriteFile(keep, out, 0o644)
	}
	return out
}

// changeMail writes, with the real git, the mail of a commit that turns
// path's content from into to.
func changeMail(t testing.TB, path string, from, to []byte, subject string) string {
	t.Helper()
	gittest.Require(t)
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	p := filepath.Join(repo, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, content := range [][]byte{from, to} {
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, repo, "add", ".")
		gittest.Run(t, repo, "commit", "-q", "-m", []string{"base", subject + "\n\nThe merged code of the other release.\n\nSigned-off-by: t <t@example.com>"}[i])
	}
	mbox := filepath.Join(t.TempDir(), "change.mbox")
	if err := os.WriteFile(mbox, gittest.Run(t, repo, "format-patch", "-1", "--stdout"), 0o644); err != nil {
		t.Fatal(err)
	}
	return mbox
}

// TestCReaderPanicIsOneCEval: a patch that turns 6.12's
// net/ipv4/tcp_output.c into 6.1's made cc/v4's parser panic (a nil
// dereference in checkTypeName) and the panic ended verify. It is one
// C_EVAL for that file, naming cc/v4, and the other rules report.
func TestCReaderPanicIsOneCEval(t *testing.T) {
	const path = "net/ipv4/tcp_output.c"
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	now, err := tree.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mbox := changeMail(t, path, now, linux61File(t, path), "tcp: take 6.1's tcp_output.c")
	s, err := ReadMail(mbox, tree)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := RunContext(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var evals []Finding
	for _, f := range fs {
		if f.ID == "C_EVAL" && f.File == path {
			evals = append(evals, f)
		}
	}
	if len(evals) != 1 || !strings.Contains(evals[0].Message, "cc/v4") {
		t.Errorf("C_EVAL findings on %s: %v; want one naming cc/v4", path, evals)
	}
}
