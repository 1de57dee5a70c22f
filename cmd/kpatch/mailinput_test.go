package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMailInputRefusals: mail that series diff or trailers cannot read is
// refused in one line that names the file once and gives one piece of
// advice, as series import and verify refuse it (exit 2).
func TestMailInputRefusals(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := specCopy(t)
	for _, tc := range []struct {
		args   []string
		file   string
		advice string
	}{
		{[]string{"series", "diff", notes, notes}, notes, "give a directory of patches"},
		{[]string{"series", "diff", filepath.Join(dir, "nope"), notes}, filepath.Join(dir, "nope"), "give a directory of patches"},
		{[]string{"trailers", "--spec", spec, notes}, notes, "give an mbox, a saved thread or a directory of mails"},
		{[]string{"trailers", "--spec", spec, empty}, empty, "give an mbox, a saved thread or a directory of mails"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		msg := stderr.String()
		if code != 2 || strings.Count(msg, "\n") != 1 || strings.Count(msg, tc.file) != 1 || strings.Count(msg, "give ") != 1 || !strings.Contains(msg, tc.advice) {
			t.Errorf("%v: exit %d, %q: want 2 and one line naming %s once with one piece of advice", tc.args, code, msg, tc.file)
		}
	}
}
