package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// TestDocumentedExit2: every case docs/cli.md calls bad input (nothing
// checked or written) exits 2, one line on stderr and with --json the
// error object saying exit 2; each of these exited 1.
func TestDocumentedExit2(t *testing.T) {
	dir := t.TempDir()
	core := gdbCore(t, dir)
	full, err := os.ReadFile(core)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.core")
	if err := os.WriteFile(cut, full[:len(full)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join("..", "..", "unwind", "testdata", "deep64.snap")
	tests := []struct {
		name string
		args []string
		want string
		tree bool // needs the Debian tree
	}{
		{"gen -o .", []string{"gen", "--tree", dir, "-o", "."}, "cannot be replaced", false},
		{"gen -o /", []string{"gen", "--tree", dir, "-o", "/"}, "root directory cannot be replaced", false},
		{"truncated core", []string{"unwind", "--core", cut}, "core truncated", false},
		{"wrong --exe", []string{"unwind", "--core", core, "--exe", "/bin/sh"}, "is not the program of this core", false},
		{"--write-snapshot over its input", []string{"unwind", "--core", core, "--write-snapshot", core}, "is an input of this run", false},
		{"--max below 0", []string{"unwind", "--core", core, "--max", "-1"}, "--max -1", false},
		{"--index beyond", []string{"unwind", "--snapshot", snap, "--index", "5"}, "--index 5", false},
		{"--thread absent", []string{"unwind", "--core", core, "--thread", "1"}, "--thread 1", false},
		{"test qemu, no unwinder", []string{"test", "qemu", "-v", "15"}, "nothing selects the unwinder", false},
		{"--range-diff = -v", []string{"gen", "-v", "12", "--range-diff", "12", "--base", "v6.12", "-o", filepath.Join(dir, "o1")}, "v12 is the one being written", true},
		{"--interdiff = -v", []string{"gen", "-v", "12", "--interdiff", "12", "--base", "v6.12", "-o", filepath.Join(dir, "o2")}, "v12 is the one being written", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.tree {
				args = append(args, "--tree", debianTree(t))
			}
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line holding %q", args, code, stderr.String(), tc.want)
			}
			stdout.Reset()
			stderr.Reset()
			run(append(args, "--json"), &stdout, &stderr)
			var e struct{ Exit int }
			if err := json.Unmarshal(stdout.Bytes(), &e); err != nil || e.Exit != 2 {
				t.Errorf("%q --json: %q (%v), want exit 2", args, stdout.String(), err)
			}
		})
	}
}

// gdbCore writes a core of /bin/true stopped at its first instruction,
// as gdb's gcore writes it, into dir.
func gdbCore(t *testing.T, dir string) string {
	t.Helper()
	gdb := testenv.Tool(t, "gdb", "gdb")
	core := filepath.Join(dir, "true.core")
	out, err := exec.Command(gdb, "-nx", "-batch", "-ex", "starti", "-ex", "gcore "+core, "-ex", "kill", "/bin/true").CombinedOutput()
	if _, serr := os.Stat(core); err != nil || serr != nil {
		testenv.Missing(t, "gdb cannot dump a core here ("+strings.TrimSpace(string(out))+")", "run where ptrace is allowed")
	}
	return core
}
