package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpecCopyWithLinks: a spec copy whose folders and files are
// symbolic links (v11 a link to a folder kept elsewhere, v12/series a
// link to a file) is read by trailers and revision new as gen reads it.
// Both refused it ("patch ... is not declared": the writer's load check
// kept only regular files), advising to mend a copy that was whole.
func TestSpecCopyWithLinks(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec")
	if code := run([]string{"spec", "-o", spec}, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatal("spec -o failed")
	}
	elsewhere := filepath.Join(dir, "elsewhere")
	os.Mkdir(elsewhere, 0o755)
	if err := os.Rename(filepath.Join(spec, "v11"), filepath.Join(elsewhere, "v11")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "elsewhere", "v11"), filepath.Join(spec, "v11")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(spec, "v12", "series"), filepath.Join(elsewhere, "v12-series")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "v12-series"), filepath.Join(spec, "v12", "series")); err != nil {
		t.Fatal(err)
	}
	replies := filepath.Join("..", "..", "revision", "trailers", "testdata", "replies.mbox")
	for _, args := range [][]string{
		{"trailers", "--spec", spec, replies},
		{"revision", "new", "--spec", spec},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Errorf("%q: exit %d, %s", args, code, stderr.String())
		}
	}
	// The trailers went into the files the links lead to, through the
	// folder's link.
	b, err := os.ReadFile(filepath.Join(elsewhere, "v11", "user-api.patch"))
	if err != nil || !strings.Contains(string(b), "Acked-by: Ingo Molnar <mingo@kernel.org>") {
		t.Errorf("v11/user-api.patch through the link: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(spec, "v17", "series")); err != nil {
		t.Errorf("revision new wrote no v17: %v", err)
	}
}
