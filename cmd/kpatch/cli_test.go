package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/oracle"
	"kpatch/plumbing/kernelsrc"
	"kpatch/plumbing/outdir"
	"kpatch/series/hooks"
)

// TestFlagsAfterArguments: flags are taken before and after the
// positional arguments, as git takes them, by every command.
func TestFlagsAfterArguments(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing.mbox")
	tests := []struct {
		args []string
		code int
		want string // on stderr
	}{
		// verify FILE --json was refused as "one FILE at most, got 2".
		// verify says input it could not read is bad input (exit 2).
		{[]string{"verify", missing, "--json"}, 2, "nothing.mbox"},
		{[]string{"verify", "--json", missing}, 2, "nothing.mbox"},
		{[]string{"series", "import", missing, "-o", filepath.Join(t.TempDir(), "o")}, 2, "nothing.mbox"},
		{[]string{"trailers", missing, "--spec", filepath.Join(t.TempDir(), "nospec")}, 2, "kpatch spec -o DIR"},
		// "--" ends the flags: what follows is an argument.
		{[]string{"verify", "--", "--json"}, 2, "--json"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and one line holding %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

// TestHelpOnce: help is printed once, on stdout, for every command and
// subcommand, however it is asked for.
func TestHelpOnce(t *testing.T) {
	for _, c := range commands() {
		for _, args := range [][]string{
			append(strings.Fields(c.name), "--help"),
			append([]string{"help"}, strings.Fields(c.name)...),
			append(strings.Fields(c.name), "-h", "--no-such-flag"),
		} {
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			head := "usage: kpatch " + c.name
			if code != 0 || strings.Count(stdout.String(), head) != 1 || stderr.Len() != 0 {
				t.Errorf("%q: exit %d, %d times %q on stdout, stderr %q", args, code, strings.Count(stdout.String(), head), head, stderr.String())
			}
		}
	}
}

// TestHelpListsEveryCommand: kpatch help names every command and
// subcommand that run dispatches, and each can be run by that name.
func TestHelpListsEveryCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	names := map[string]bool{}
	for _, c := range commands() {
		names[c.name] = true
		if !strings.Contains(stdout.String(), "\n  "+c.name+" ") {
			t.Errorf("kpatch help does not list %q:\n%s", c.name, stdout.String())
		}
	}
	for _, n := range []string{"gen", "verify", "test qemu", "test build", "unwind", "tree", "spec", "series diff", "series import", "revision new", "trailers"} {
		if !names[n] {
			t.Errorf("no command %q", n)
		}
	}
	if !strings.Contains(stdout.String(), "Exit status") {
		t.Errorf("kpatch help does not give the exit codes")
	}
	for group, subs := range map[string][]string{"test": {"test qemu", "test build"}, "series": {"series diff", "series import"}, "revision": {"revision new"}} {
		for _, args := range [][]string{{"help", group}, {group, "--help"}} {
			stdout.Reset()
			stderr.Reset()
			code := run(args, &stdout, &stderr)
			for _, sub := range subs {
				if code != 0 || !strings.Contains(stdout.String(), "\n  "+sub+" ") {
					t.Errorf("%q: exit %d, does not list %q:\n%s%s", args, code, sub, stdout.String(), stderr.String())
				}
			}
		}
	}
}

// TestTestSubcommands: kpatch test build and kpatch test qemu are the
// subcommands; the --build and --qemu flag forms still work the same.
func TestTestSubcommands(t *testing.T) {
	for _, args := range [][]string{
		{"test", "build", "--jobs", "0"},
		{"test", "--build", "--jobs", "0"},
		{"test", "--jobs", "0", "--build"},
		{"test", "qemu", "--timeout", "-1s"},
		{"test", "--qemu", "--timeout", "-1s"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "must be") {
			t.Errorf("%q: exit %d, %q", args, code, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"test"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "test build") {
		t.Errorf("kpatch test: exit %d, %q", code, stderr.String())
	}
}

// TestJSONErrors: with --json every refusal is also a JSON object on
// stdout with the error and the exit status.
func TestJSONErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing.mbox")
	seed, err := oracle.SeedPath() // a posted thread verify reads
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gen", "--json", "--no-such-flag"}, 2, "unknown flag --no-such-flag"},
		{[]string{"nosuch", "--json"}, 2, `unknown command "nosuch"`},
		{[]string{"series", "bogus", "--json"}, 2, `unknown subcommand "bogus"`},
		{[]string{"verify", missing, "--json"}, 2, "nothing.mbox"},
		{[]string{"trailers", "--json", missing}, 2, "--spec DIR"},
		{[]string{"unwind", "--json"}, 2, "--core"},
		{[]string{"test", "build", "--json", "--jobs", "0"}, 2, "--jobs"},
		{[]string{"test", "qemu", "--json", "--accel", "warp"}, 2, "warp"},
		{[]string{"test", "qemu", "--json", "--stack", "nope"}, 2, `no series "nope"`},
		{[]string{"test", "build", "--json", "--stack", "x86", "-v", "16"}, 2, "x86 v16"},
		{[]string{"verify", "--json", "--stack", "x86", "-v", "16", "--tree", t.TempDir()}, 2, "x86 v16"},
		{[]string{"gen", "--json", "--tree", t.TempDir(), "-o", filepath.Join(t.TempDir(), "o")}, 2, "not a Linux kernel tree"},
		// Inputs named on the command line that are not there.
		{[]string{"gen", "--json", "--tree", missing, "-o", filepath.Join(t.TempDir(), "o")}, 2, "nothing.mbox does not exist: not a Linux kernel tree: give one with --tree"},
		{[]string{"test", "build", "--json", "--tree", missing, "--base", "v6.12"}, 2, "does not exist"},
		{[]string{"verify", "--json", "--spec", missing, seed}, 2, "--spec " + missing + ": not a directory"},
		{[]string{"unwind", "--json", "--core", missing}, 2, "open " + missing},
		{[]string{"unwind", "--json", "--snapshot", missing}, 2, "open " + missing},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		var e struct {
			Error string
			Exit  int
		}
		dec := json.NewDecoder(&stdout)
		if err := dec.Decode(&e); err != nil || code != tc.code || e.Exit != code || !strings.Contains(e.Error, tc.want) || dec.More() {
			t.Errorf("%q: exit %d, JSON %+v (%v); want exit %d and an error holding %q", tc.args, code, e, err, tc.code, tc.want)
		}
		if strings.HasPrefix(e.Error, "kpatch") {
			t.Errorf("%q: the JSON error %q repeats the command name", tc.args, e.Error)
		}
	}
}

// failingWriter fails every write, as standard output on /dev/full does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestStdoutErrors: a command whose output cannot be written fails.
func TestStdoutErrors(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec")
	replies := filepath.Join("..", "..", "revision", "trailers", "testdata", "replies.mbox")
	seed, err := oracle.SeedPath()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"spec", "-o", spec},
		{"trailers", "--spec", spec, replies},
		{"trailers", "--spec", spec, "--json", replies},
		{"revision", "new", "--spec", spec},
		{"series", "import", seed, "-o", filepath.Join(dir, "imported")},
		{"help"},
		{"gen", "--help"},
	} {
		var stderr bytes.Buffer
		code := run(args, failingWriter{}, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "standard output") || !strings.Contains(stderr.String(), "no space left") {
			t.Errorf("%q: exit %d, %q", args, code, stderr.String())
		}
	}
}

// TestBadInputKinds: what exits 2 (an input that cannot be used) and what
// exits 1 (the work failed): a file that is missing says nothing by
// itself (one that vanishes during a build is a failure of the work), an
// input the command names missing does, where it is read.
func TestBadInputKinds(t *testing.T) {
	gone := &fs.PathError{Op: "open", Path: "build/kernel/fork.o", Err: fs.ErrNotExist}
	tests := []struct {
		name string
		err  error
		bad  bool
	}{
		{"a missing file", fmt.Errorf("kbuild: %w", gone), false},
		{"a missing input named", badInput(fmt.Errorf("kpatch.core: %w", gone)), true},
		{"a tree without a file the series edits", fmt.Errorf("patch 1: %w", hooks.ErrNoFile), true},
		{"a --tree that does not exist", fmt.Errorf("gen: %w", kernelsrc.ErrNotKernel), true},
		{"a --spec that is not a directory", fmt.Errorf("--spec x: %w", outdir.ErrNotDir), true},
		{"a failed build", errors.New("make: *** [Makefile:1] Error 2"), false},
	}
	for _, tc := range tests {
		if got := isBadInput(tc.err); got != tc.bad {
			t.Errorf("%s (%v): bad input %v, want %v", tc.name, tc.err, got, tc.bad)
		}
	}
}
