package main

import (
	"bytes"
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
		{nil, 0, "patch 12"},
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
// compat unwinder (by default the newest that has, v13); at a revision
// whose kernel refuses compat tasks and has none (v14, and the x86 series
// on v16 as merged) kpatch unwind says so and names the revisions that
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
		{nil, 0, []string{"kind compat-fp, mode compat, patch 14"}},
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
