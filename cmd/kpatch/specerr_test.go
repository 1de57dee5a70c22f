package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedSpecExits2: a spec copy that cannot be read is bad input to
// every command that reads it: exit 2, one line naming the file, and
// "exit": 2 in the JSON error of those that give one.
func TestDamagedSpecExits2(t *testing.T) {
	tree := debianTree(t)
	damages := []struct {
		name string
		file string // relative to the copy
		edit func(string) string
		want string
	}{
		{"a template that does not parse", "files/kernel/unwind/user.c.tmpl", func(s string) string { return s + "{{if since \"fp\"}}\n" }, "files/kernel/unwind/user.c.tmpl"},
		{"an unknown header field", "v16/series", func(s string) string { return "Colour: blue\n" + s }, `v16/series:1: unknown field "Colour"`},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "spec")
			var stdout, stderr bytes.Buffer
			if code := run([]string{"spec", "-o", dir}, &stdout, &stderr); code != 0 {
				t.Fatal(stderr.String())
			}
			p := filepath.Join(dir, filepath.FromSlash(d.file))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(d.edit(string(b))), 0o644); err != nil {
				t.Fatal(err)
			}
			mbox := filepath.Join("..", "..", "revision", "trailers", "testdata", "replies.mbox")
			out := filepath.Join(t.TempDir(), "out")
			for _, args := range [][]string{
				{"gen", "--spec", dir, "--tree", tree, "--base", "v6.12", "-v", "16", "-o", out, "--json"},
				{"spec", "--spec", dir, "-v", "16", "-o", out},
				{"series", "diff", "--spec", dir, "--tree", tree, "--base", "v6.12", "v15", "v16"},
				{"test", "build", "--spec", dir, "--tree", tree, "--base", "v6.12", "-v", "16", "--json"},
				{"trailers", "--spec", dir, "-v", "16", "--json", mbox},
				{"revision", "new", "--spec", dir},
				{"verify", "--spec", dir, "--tree", tree, "--base", "v6.12", "-v", "16", "--json"},
			} {
				stdout.Reset()
				stderr.Reset()
				code := run(args, &stdout, &stderr)
				name := strings.Join(args[:2], " ")
				if code != 2 || !strings.Contains(stderr.String(), d.want) || strings.Count(stderr.String(), "\n") != 1 {
					t.Errorf("%s: exit %d, want 2 naming %q: %s", name, code, d.want, stderr.String())
				}
				// The copy is there: the advice is to mend it, not to write one.
				if strings.Contains(stderr.String(), "write a copy to edit") {
					t.Errorf("%s: advises writing a copy that exists: %s", name, stderr.String())
				}
				if args[len(args)-1] == "--json" {
					var rep struct{ Exit int }
					if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Exit != 2 {
						t.Errorf("%s --json: %v, %q", name, err, stdout.String())
					}
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// TestInterruptedTrailersCopy: a spec copy that a killed kpatch trailers
// run left with its temporary file (ReplaceFiles writes each new
// description beside the old one first) is refused with what to do, and
// running kpatch trailers again clears it and adds the trailers.
func TestInterruptedTrailersCopy(t *testing.T) {
	dir := specCopy(t)
	f, err := os.CreateTemp(filepath.Join(dir, "v11"), ".faultable.patch.kpatch-tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("Author: half a descrip")
	f.Close()
	out := filepath.Join(t.TempDir(), "flat")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"spec", "--spec", dir, "-v", "16", "-o", out}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), filepath.Base(f.Name())+": a temporary file an interrupted kpatch trailers run left: run kpatch trailers on the copy again") {
		t.Errorf("spec -v on the copy: exit %d, %q", code, stderr.String())
	}
	replies := filepath.Join("..", "..", "revision", "trailers", "testdata", "replies.mbox")
	stderr.Reset()
	if code := run([]string{"trailers", "-v", "12", "--spec", dir, replies}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "added 17 to v12") {
		t.Fatalf("trailers again: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(f.Name()); err == nil {
		t.Errorf("%s is still there", f.Name())
	}
	stderr.Reset()
	if code := run([]string{"spec", "--spec", dir, "-v", "16", "-o", out}, &stdout, &stderr); code != 0 {
		t.Errorf("spec -v after trailers: exit %d: %s", code, stderr.String())
	}
}

// TestNotASpecDirectory: an empty directory, or one without files/, is
// refused as no series description, saying what it lacks and how to get a
// complete one.
func TestNotASpecDirectory(t *testing.T) {
	empty := t.TempDir()
	noFiles := specCopy(t)
	if err := os.RemoveAll(filepath.Join(noFiles, "files")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{empty, "no files/ folder and no v*/series file: not a series description; kpatch spec -o DIR writes a complete one"},
		{noFiles, "no files/ folder (the templates of the files the series creates): not a series description; kpatch spec -o DIR writes a complete one"},
	} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"gen", "--spec", tc.dir, "-o", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "stat files") {
			t.Errorf("%s: exit %d, %q", tc.dir, code, stderr.String())
		}
	}
}
