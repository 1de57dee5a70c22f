package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

// TestSeriesDiffRefusesMissingRevision: v0 (which the series options
// would read as "the newest") and a revision the description lacks are
// refused with one line naming the revisions it has, before any tree is
// read.
func TestSeriesDiffRefusesMissingRevision(t *testing.T) {
	for _, args := range [][]string{{"v0", "v12"}, {"v99", "v12"}} {
		var out, errb bytes.Buffer
		code := run(append([]string{"series", "diff", "--tree", t.TempDir()}, args...), &out, &errb)
		msg := errb.String()
		if code == 0 || out.Len() != 0 || strings.Count(msg, "\n") != 1 ||
			!strings.Contains(msg, args[0]+": no such revision") || !strings.Contains(msg, "it has v11") {
			t.Errorf("series diff %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out.String(), msg)
		}
	}
}

// TestSeriesDiffMailmap: series diff on two mboxes maps authors through
// --tree's .mailmap and unquotes dotted names, as git range-diff run in
// that repository does.
func TestSeriesDiffMailmap(t *testing.T) {
	gittest.Require(t)
	dir := t.TempDir()
	git := func(args ...string) string { return string(gittest.Run(t, dir, args...)) }
	git("init", "-q", "-b", "main")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".mailmap", "Canonical Name <canon@example.com> <old@example.com>\n")
	write("a.c", "one\ntwo\nthree\nfour\nfive\n")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	for _, side := range []struct{ branch, author, text string }{
		{"old", "Old Name <old@example.com>", "one\ntwo\nTHREE\nfour\nfive\n"},
		{"new", "H. Peter Anvin <hpa@example.com>", "one\ntwo\nThree\nfour\nfive\n"},
	} {
		git("checkout", "-q", "-b", side.branch, "main")
		write("a.c", side.text)
		git("commit", "-q", "-a", "-m", "change three", "--author", side.author)
		write(side.branch+".mbox", git("format-patch", "--stdout", "main.."+side.branch))
	}
	want := git("-c", "core.abbrev=12", "range-diff", "--no-color", "main..old", "main..new")
	if !strings.Contains(want, "Canonical Name") || !strings.Contains(want, "+Author: H. Peter Anvin") {
		t.Fatalf("git's range-diff does not show what this test is about:\n%s", want)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"series", "diff", "--tree", dir, filepath.Join(dir, "old.mbox"), filepath.Join(dir, "new.mbox")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if out.String() != want {
		t.Errorf("series diff:\n%s\ngit range-diff:\n%s", out.String(), want)
	}
}
