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
		{[]string{"-v", "9"}, 2, "-v: v9"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"unwind", "--snapshot", snap}, tc.args...), &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.want, out)
		}
	}
}
