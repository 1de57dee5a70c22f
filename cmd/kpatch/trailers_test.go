package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrailersCommand runs kpatch trailers twice on a spec copy: the first
// run reports and writes what it added, the second adds nothing; --dry-run
// changes nothing; bad input gets one line naming what to give.
func TestTrailersCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spec")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"spec", "-o", dir}, &stdout, &stderr); code != 0 {
		t.Fatal(stderr.String())
	}
	replies := filepath.Join("..", "..", "revision", "trailers", "testdata", "replies.mbox")
	p6 := filepath.Join(dir, "v11", "deferred.patch")
	before, _ := os.ReadFile(p6)
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"trailers", "-v", "12", "--spec", dir, "--dry-run", replies}, &stdout, &stderr); code != 0 {
		t.Fatalf("dry run: %s", stderr.String())
	}
	if after, _ := os.ReadFile(p6); !bytes.Equal(before, after) || !strings.Contains(stderr.String(), "would add 17 to v12") {
		t.Errorf("dry run changed a file or reported %q", stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"trailers", "-v", "12", "--spec", dir, replies}, &stdout, &stderr); code != 0 {
		t.Fatalf("run: %s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "v11/deferred.patch: Tested-by: Tess Ter <tess@example.org> (subject, from r3@example.org by Tess Ter <tess@example.org>)\n") ||
		!strings.Contains(stderr.String(), "added 17 to v12, 5 for patches v12 does not have") {
		t.Errorf("report:\n%s%s", stdout.String(), stderr.String())
	}
	if b, _ := os.ReadFile(p6); !strings.Contains(string(b), "Signed-off-by: Steven Rostedt (Google) <rostedt@goodmis.org>\n{{if ge .Version 12}}\nAcked-by: Ingo Molnar <mingo@kernel.org>\nTested-by: Tess Ter <tess@example.org>\nSuggested-by: Sue Gest <sue@example.org>\nLink: https://lore.kernel.org/all/idea@example.org/\n{{end}}\n") {
		t.Errorf("deferred.patch:\n%s", b)
	}
	stderr.Reset()
	if code := run([]string{"trailers", "-v", "12", "--spec", dir, replies}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "added 0 to v12") {
		t.Errorf("second run: exit %d, %q", code, stderr.String())
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"trailers", replies}, 2, "give the spec copy with --spec DIR"},
		{[]string{"trailers", "--spec", filepath.Join(dir, "nope"), replies}, 2, "write a copy to edit with kpatch spec -o DIR"},
		{[]string{"trailers", "-v", "12", "--spec", dir, filepath.Join(dir, "nope.mbox")}, 2, "give an mbox, a saved thread or a directory of mails"},
	} {
		stderr.Reset()
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr.String())
		}
	}
}

// TestTrailersTemplateText: a reply's trailer is text, whatever it holds:
// one with template actions in it ends up in the generated patch exactly
// as given, and the spec copy still generates, verifies and takes
// trailers (the second run finds them there and adds nothing).
func TestTrailersTemplateText(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spec")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"spec", "-o", dir}, &stdout, &stderr); code != 0 {
		t.Fatal(stderr.String())
	}
	trailers := []string{"Reviewed-by: C {{.Version}} <c@example.org>", "Tested-by: E {{end}} <e@example.org>"}
	mbox := filepath.Join(t.TempDir(), "replies.mbox")
	var b strings.Builder
	for i, tr := range trailers {
		fmt.Fprintf(&b, "From mboxrd@z Thu Jan  1 00:00:00 1970\nMessage-ID: <r%d@example.org>\nFrom: R <r@example.org>\nDate: Wed, 25 Jun 2025 18:56:00 -0400\nSubject: Re: [PATCH v16 02/10] unwind_user/deferred: Add unwind_user_faultable()\n\nLooks good.\n\n%s\n\n", i, tr)
	}
	if err := os.WriteFile(mbox, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"trailers", "-v", "16", "--spec", dir, mbox}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "added 2 to v16") {
		t.Fatalf("trailers: exit %d: %s", code, stderr.String())
	}
	tree := debianTree(t)
	out := filepath.Join(t.TempDir(), "out")
	stderr.Reset()
	if code := run([]string{"gen", "--spec", dir, "--tree", tree, "--base", "v6.12", "-v", "16", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("gen on the copy: exit %d: %s", code, stderr.String())
	}
	patch, err := os.ReadFile(filepath.Join(out, "v16-0002-unwind_user-deferred-Add-unwind_user_faultable.patch"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trailers {
		if !strings.Contains(string(patch), "\n"+tr+"\n") {
			t.Errorf("patch 2 does not carry %q:\n%s", tr, patch)
		}
	}
	stderr.Reset()
	if code := run([]string{"verify", "--spec", dir, "--tree", tree, "--base", "v6.12", "-v", "16"}, &stdout, &stderr); code == 2 {
		t.Errorf("verify on the copy: exit 2: %s", stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"trailers", "-v", "16", "--spec", dir, mbox}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "added 0 to v16") {
		t.Errorf("second run: exit %d: %s", code, stderr.String())
	}
}
