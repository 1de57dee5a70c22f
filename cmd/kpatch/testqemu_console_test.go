package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// saved is the real console of a boot of the x86 series on v16, with the
// symbol tables of its programs.
const saved = "../../boottest/testdata/stack-x86"

// copySaved copies the saved boot's symbol tables to a new directory and
// writes its console there, unpacked and passed through edit.
func copySaved(t *testing.T, edit func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range []string{"unwind_test64.syms", "unwind_test32.syms"} {
		b, err := os.ReadFile(filepath.Join(saved, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(filepath.Join(saved, "console.log.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "console.log")
	if err := os.WriteFile(p, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// kpatch test qemu --console checks a saved console again without a
// tree, a build or QEMU: exit 0 for the real boot's log, 1 when a trace
// no longer matches the walker, 2 for a log it cannot check.
func TestTestQEMUConsole(t *testing.T) {
	same := func(s string) string { return s }
	altered := func(s string) string {
		// the first frame of the first 64-bit trace
		i := strings.Index(s, "kernel: 0x")
		j := i + len("kernel: ") + strings.IndexByte(s[i+len("kernel: "):], ' ')
		return s[:i] + "kernel: 0x401000" + s[j:]
	}
	tests := []struct {
		name   string
		args   func(t *testing.T) []string
		code   int
		stdout string // substring
		stderr string // whole, "" for none
	}{
		{"the boot's log", func(t *testing.T) []string {
			return []string{"--stack", "x86", "--console", filepath.Join(saved, "console.log.gz")}
		}, 0, "\nPASS: x86 v2 on v16: 35 passed, 0 failed, 1 skipped; checked again without booting; console log: ", ""},
		{"a frame altered", func(t *testing.T) []string {
			return []string{"--stack", "x86", "--console", copySaved(t, altered)}
		}, 1, "\nFAIL: x86 v2 on v16: 34 passed, 1 failed, 1 skipped;", "kpatch test qemu: self-tests failed (see the table above)\n"},
		{"no programs beside it", func(t *testing.T) []string {
			p := copySaved(t, same)
			os.Remove(filepath.Join(filepath.Dir(p), "unwind_test64.syms"))
			return []string{"--stack", "x86", "--console", p}
		}, 2, "", "--progs DIR"},
		{"programs elsewhere", func(t *testing.T) []string {
			p := copySaved(t, same)
			os.Remove(filepath.Join(filepath.Dir(p), "unwind_test64.syms"))
			return []string{"--stack", "x86", "--console", p, "--progs", saved}
		}, 0, "\nPASS: x86 v2 on v16", ""},
		{"a log of another series", func(t *testing.T) []string {
			return []string{"-v", "13", "--console", copySaved(t, func(s string) string {
				return strings.Replace(s, "Command line: ", "Command line: kpatch.series=x86_v2_on_v16 ", 1)
			})}
		}, 2, "", "the console is of a boot of x86_v2_on_v16 (kpatch.series= on its command line), the flags select v13: give the -v/--stack of that boot"},
		{"no such log", func(t *testing.T) []string {
			return []string{"--console", filepath.Join(t.TempDir(), "none.log")}
		}, 2, "", "no such file or directory: give a console log a boot saved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir()) // no QEMU, no gcc: nothing boots
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"test", "qemu"}, tc.args(t)...), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, stdout.String())
			}
			switch {
			case tc.code == 2 && (!strings.Contains(stderr.String(), tc.stderr) || strings.Count(stderr.String(), "\n") != 1):
				t.Errorf("stderr %q, want one line with %q", stderr.String(), tc.stderr)
			case tc.code != 2 && stderr.String() != tc.stderr:
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
		})
	}
}

// --json gives the same report as JSON, marked as checked again.
func TestTestQEMUConsoleJSON(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := run([]string{"test", "qemu", "--stack", "x86", "--json", "--console", filepath.Join(saved, "console.log.gz")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep struct {
		Passed    bool
		Rechecked bool
		Series    string
		Cases     []struct{ Status string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Passed || !rep.Rechecked || rep.Series != "x86 v2 on v16" || len(rep.Cases) != 36 {
		t.Errorf("report %+v", rep)
	}
}

// --filter names what it does not select and the cases there are, before
// anything is looked for (no QEMU or gcc in $PATH here).
func TestTestQEMUFilterRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--filter", "depth_2"}, `kpatch test qemu: --filter depth_2: bad case filter: "depth_2" selects none of the cases: depth_1 depth_8 `},
		{[]string{"--filter", "ia32.[", "--stack", "x86"}, `kpatch test qemu: --filter ia32.[: bad case filter: "ia32.[" is not a glob`},
		{[]string{"--filter", "depth_*", "--exec", "ls"}, "kpatch test qemu: --exec runs a command instead of the cases: give --exec or --filter, not both"},
	} {
		t.Setenv("PATH", t.TempDir())
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"test", "qemu", "--tree", "/nonexistent"}, tc.args...), &stdout, &stderr)
		if code != 2 || !strings.HasPrefix(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
