package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kpatch unwind --patch N means patch N of the chosen -v (default: the
// newest revision with a user unwinder on x86_64, v14) and refuses a
// number that revision lacks; without --patch the revision's last patch
// applies.
func TestUnwindPatchOfRevision(t *testing.T) {
	snap := filepath.Join("..", "..", "unwind", "testdata", "deep64.snap")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-v", "11", "--patch", "14"}, 0, "patch 14"},
		{[]string{"-v", "14", "--patch", "12"}, 0, "patch 12"},
		{[]string{"-v", "14"}, 0, "patch 12"},
		{nil, 0, "patch 26"}, // the newest state with an unwinder: x86-6.19 on v16
		{[]string{"-v", "16"}, 2, "no user unwinder"},
		{[]string{"-v", "14", "--patch", "14"}, 2, "--patch 14: v14 has patches 1 to 12"},
		{[]string{"-v", "11", "--patch", "3"}, 2, "no user unwinder"},
		{[]string{"-v", "9"}, 2, "v9: no such revision"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"unwind", "--snapshot", snap}, tc.args...), &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.want, out)
		}
	}
}

// A 32-bit task is walked with 4-byte frames where the revision has a
// compat unwinder (by default the newest state that has one: the x86
// part as 6.19 merged it, on v16); at a revision
// whose kernel refuses compat tasks and has none (v14, and the x86 series
// v2 on v16, posted) kpatch unwind says so and names the revisions that
// do, instead of walking it with 64-bit frames; before a revision's
// compat patch it walks as that kernel does, with a warning.
func TestUnwindCompatTask(t *testing.T) {
	snap := filepath.Join("..", "..", "unwind", "testdata", "snapshots", "console.log")
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"-v", "13"}, 0, []string{"kind compat-fp, mode compat"}},
		{nil, 0, []string{"kind compat-fp, mode compat, patch 26"}}, // x86-6.19 on v16: word-size compat frames
		{[]string{"-v", "14"}, 2, []string{"v14 does not unwind 32-bit tasks", "-v 11, -v 12, -v 13 unwind them with 4-byte frames"}},
		{[]string{"--stack", "x86"}, 2, []string{"x86 v2 on v16 does not unwind 32-bit tasks"}},
		{[]string{"-v", "13", "--patch", "13"}, 0, []string{"warning: v13 after patch 13 has no compat unwinder", "kind fp, mode compat"}},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"unwind", "--snapshot", snap, "--index", "2"}, tc.args...), &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d:\n%s", tc.args, code, tc.code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: no %q in:\n%s", tc.args, w, out)
			}
		}
		if tc.code != 0 && stdout.Len() > 0 {
			t.Errorf("%v: refused, but printed a walk:\n%s", tc.args, stdout.String())
		}
	}
}

// --uprobe walks as the kernel does in a uprobe handler at ip: a snapshot
// says so with its uprobe= field, and one without it is refused; at a
// revision without the start-of-function rule of Linux 6.19 a uprobe
// changes nothing, with a warning.
func TestUnwindUprobe(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "unwind", "testdata", "deep64.snap"))
	if err != nil {
		t.Fatal(err)
	}
	probed := filepath.Join(t.TempDir(), "probed.snap")
	withField := strings.Replace(string(data), " bp=", " uprobe=55 bp=", 1)
	if withField == string(data) {
		t.Fatal("deep64.snap has no bp= field")
	}
	if err := os.WriteFile(probed, []byte(withField), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join("..", "..", "unwind", "testdata", "deep64.snap")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--snapshot", plain, "--uprobe"}, 2, "--uprobe: snapshot 0 of " + plain + " has no uprobe= field"},
		{[]string{"--snapshot", probed, "-v", "14"}, 0, "warning: v14 after patch 12 has no start-of-function rule"},
		{[]string{"--snapshot", probed, "--uprobe", "-v", "14"}, 0, "warning: v14 after patch 12 has no start-of-function rule"},
		{[]string{"--snapshot", probed}, 0, "patch 26, max 510, uprobe at a function's start: entry 1 read at sp"},
		{[]string{"--snapshot", plain}, 0, "stop: "},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"unwind"}, tc.args...), &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.want, out)
		}
		if len(tc.args) == 2 && tc.args[1] == plain && strings.Contains(out, "start-of-function") {
			t.Errorf("%v: warns of a uprobe it was not given:\n%s", tc.args, out)
		}
	}
}
