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

// TestTrailersStacked: replies to a stacked series (x86 v2 on v16) give
// trailers to its own patches only: one to patch 1, declared in v11's
// folder, is guarded by the stacked series' name and version, so x86 v2
// carries it and v11 (where the same declaration is patch 13) does not;
// a reply to the cover letter goes to both of its patches and none of
// v16's. A patch declared in the stacked revision's own folder
// (x86-6.19-v1/perf-deferred.patch) takes its trailer unguarded. A
// second run adds nothing.
func TestTrailersStacked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spec")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"spec", "-o", dir}, &stdout, &stderr); code != 0 {
		t.Fatal(stderr.String())
	}
	mbox := filepath.Join(t.TempDir(), "replies.mbox")
	reply := func(id, subject, trailer string) string {
		return fmt.Sprintf("From mboxrd@z Thu Jan  1 00:00:00 1970\nMessage-ID: <%s@example.org>\nFrom: R <r@example.org>\nDate: Wed, 25 Jun 2025 18:56:00 -0400\nSubject: %s\n\nLooks good.\n\n%s\n\n", id, subject, trailer)
	}
	x86 := reply("r1", "Re: [PATCH v2 1/2] unwind_user/x86: Enable frame pointer unwinding on x86", "Reviewed-by: Rev Iewer <rev@example.org>") +
		reply("r2", "Re: [PATCH v2 0/2] x86: Enable the deferred unwinding infrastructure", "Acked-by: Ack Er <ack@example.org>")
	if err := os.WriteFile(mbox, []byte(x86), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"trailers", "--stack", "x86", "-v", "2", "--spec", dir, mbox}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "added 3 to x86 v2, 0 for patches") {
		t.Fatalf("trailers: exit %d: %s", code, stderr.String())
	}
	fp, err := os.ReadFile(filepath.Join(dir, "v11", "x86-fp.patch"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\n{{if and (eq .Stack \"x86\") (ge .StackVersion 2)}}\nReviewed-by: Rev Iewer <rev@example.org>\nAcked-by: Ack Er <ack@example.org>\n{{end}}\n"; !strings.Contains(string(fp), want) {
		t.Errorf("v11/x86-fp.patch lacks %q:\n%s", want, fp)
	}
	tree := debianTree(t)
	gen := func(args ...string) string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out")
		stderr.Reset()
		if code := run(append([]string{"gen", "--spec", dir, "--tree", tree, "--base", "v6.12", "-o", out}, args...), &stdout, &stderr); code != 0 {
			t.Fatalf("gen %v: exit %d: %s", args, code, stderr.String())
		}
		var all strings.Builder
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(out, e.Name()))
			all.WriteString(e.Name() + "\n" + string(b))
		}
		return all.String()
	}
	stacked := gen("--stack", "x86", "-v", "2")
	if n := strings.Count(stacked, "\nAcked-by: Ack Er <ack@example.org>\n"); n != 2 || strings.Count(stacked, "\nReviewed-by: Rev Iewer <rev@example.org>\n") != 1 {
		t.Errorf("x86 v2 carries the Acked-by %d times (want 2) and the Reviewed-by %d times (want 1)", n, strings.Count(stacked, "Reviewed-by: Rev Iewer"))
	}
	for _, v := range []string{"11", "16"} {
		if main := gen("-v", v); strings.Contains(main, "Rev Iewer") || strings.Contains(main, "Ack Er") {
			t.Errorf("v%s carries a trailer given to x86 v2", v)
		}
	}
	stderr.Reset()
	if code := run([]string{"trailers", "--stack", "x86", "-v", "2", "--spec", dir, mbox}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "added 0 to x86 v2") {
		t.Errorf("second run: exit %d: %s", code, stderr.String())
	}

	perf := reply("r3", "Re: [PATCH 14/16] perf: Support deferred user unwind", "Tested-by: Tess Ter <tess@example.org>")
	if err := os.WriteFile(mbox, []byte(perf), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run([]string{"trailers", "--stack", "x86-6.19", "--spec", dir, mbox}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "added 1 to x86-6.19 v1") {
		t.Fatalf("trailers x86-6.19: exit %d: %s", code, stderr.String())
	}
	decl, _ := os.ReadFile(filepath.Join(dir, "x86-6.19-v1", "perf-deferred.patch"))
	if !strings.Contains(string(decl), "\nTested-by: Tess Ter <tess@example.org>\n") || strings.Contains(string(decl), "{{if and (eq .Stack") {
		t.Errorf("x86-6.19-v1/perf-deferred.patch:\n%s", decl)
	}
}
