package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenRevDiff: --interdiff and --range-diff end the cover letter with
// their section (the content is compared with git in package series); an
// unusable revision is one line and writes nothing.
func TestGenRevDiff(t *testing.T) {
	tree := debianTree(t)
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-v", "12", "--tree", tree, "--base", "v6.12", "--interdiff", "11", "--range-diff", "11", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	cover, err := os.ReadFile(filepath.Join(out, "v12-0000-cover-letter.patch"))
	if err != nil {
		t.Fatal(err)
	}
	i, j, k := bytes.Index(cover, []byte("\nInterdiff against v11:\ndiff --git ")), bytes.Index(cover, []byte("\nRange-diff against v11:\n 1:  ")), bytes.Index(cover, []byte("\nbase-commit: "))
	if i < 0 || j < i || k < j {
		t.Errorf("cover letter sections at %d, %d, base-commit at %d", i, j, k)
	}
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--interdiff", "12"}, "--interdiff: revision v12 is the one being written: give an earlier one", 2},
		{[]string{"--range-diff", "9"}, "--range-diff: v9: no such revision", 2},
		// The x86 series' earlier revisions are its own, not v16's.
		{[]string{"--stack", "x86", "-v", "2", "--range-diff", "16"}, "--range-diff: x86 v16: no such revision in the series description (it has v2)", 2},
		{[]string{"--stack", "x86", "-v", "2", "--interdiff", "2"}, "--interdiff: revision v2 is the one being written", 2},
	} {
		stderr.Reset()
		dst := filepath.Join(t.TempDir(), "none")
		args := append([]string{"gen", "-v", "12", "--tree", tree, "--base", "v6.12", "-o", dst}, tc.args...)
		if code := run(args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr.String())
		}
		if _, err := os.Stat(dst); err == nil {
			t.Errorf("%v: the output directory was created", tc.args)
		}
	}
}
