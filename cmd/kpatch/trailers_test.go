package main

import (
	"bytes"
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
	if after, _ := os.ReadFile(p6); !bytes.Equal(before, after) || !strings.Contains(stderr.String(), "would add 15 to v12") {
		t.Errorf("dry run changed a file or reported %q", stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"trailers", "-v", "12", "--spec", dir, replies}, &stdout, &stderr); code != 0 {
		t.Fatalf("run: %s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "v11/deferred.patch: Tested-by: Tess Ter <tess@example.org> (subject, from r3@example.org)\n") ||
		!strings.Contains(stderr.String(), "added 15 to v12, 3 for patches v12 does not have") {
		t.Errorf("report:\n%s%s", stdout.String(), stderr.String())
	}
	if b, _ := os.ReadFile(p6); !strings.Contains(string(b), "Signed-off-by: Steven Rostedt (Google) <rostedt@goodmis.org>\n{{if ge .Version 12}}\nAcked-by: Ingo Molnar <mingo@kernel.org>\nTested-by: Tess Ter <tess@example.org>\n{{end}}\n") {
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
