package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kpatch/internal/oracle"
)

// TestGitForms: kpatch takes its flags as git users type them and
// answers a mistyped one as git does, in a line or two.
func TestGitForms(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a regexp stdout must match ("" for none)
		stderr string // a regexp stderr must match ("" for none)
	}{
		// git format-patch -v12: the value attached to a one-letter flag.
		{"attached -v", []string{"spec", "-v12", "-o", filepath.Join(dir, "flat12")}, 0, "flat12\n$", ""},
		{"attached -o", []string{"spec", "-v", "13", "-o" + filepath.Join(dir, "flat13")}, 0, "flat13\n$", ""},
		// --verbose is a flag of its own, not -v erbose.
		{"a word flag", []string{"test", "qemu", "-verbose", "7"}, 2, "", "--verbose 7: must be 0, 1 or 2"},
		// The flag as typed, the one meant, and no help dump.
		{"typo", []string{"gen", "--bsae", "v6.12"}, 2, "", `^kpatch gen: unknown flag --bsae: did you mean --base\?\nusage: kpatch gen .*\nRun 'kpatch help gen' for its flags.\n$`},
		{"typo one dash", []string{"verify", "-jsno"}, 2, "", `unknown flag -jsno: did you mean --json\?`},
		{"prefix", []string{"test", "build", "--job", "2"}, 2, "", `unknown flag --job: did you mean --jobs\?`},
		{"nothing close", []string{"gen", "--frobnicate"}, 2, "", `unknown flag --frobnicate\n`},
		{"bad number", []string{"gen", "-vx"}, 2, "", `-v "x": not a number`},
		{"bad bool", []string{"gen", "--json=maybe"}, 2, "", `--json=maybe: want true or false`},
		{"command typo", []string{"gne"}, 2, "", `^kpatch: unknown command "gne": did you mean gen\? \(kpatch help lists the commands\)\n$`},
		{"subcommand typo", []string{"series", "dif", "a", "b"}, 2, "", `^kpatch: unknown subcommand "dif" of series: did you mean series diff\?\n$`},
		{"version", []string{"--version"}, 0, `^kpatch version \S+`, ""},
		{"help help", []string{"help", "help"}, 0, `^usage: kpatch help \[CMD\]`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("%q: exit %d, want %d; stderr %q", tc.args, code, tc.code, stderr.String())
			}
			for _, c := range []struct {
				name, re string
				got      *bytes.Buffer
			}{{"stdout", tc.stdout, &stdout}, {"stderr", tc.stderr, &stderr}} {
				if c.re == "" && c.got.Len() > 0 {
					t.Errorf("%q: %s %q, want nothing", tc.args, c.name, c.got.String())
				}
				if c.re != "" && !regexp.MustCompile(c.re).MatchString(c.got.String()) {
					t.Errorf("%q: %s %q does not match %q", tc.args, c.name, c.got.String(), c.re)
				}
			}
			if n := strings.Count(stderr.String(), "\n"); n > 3 {
				t.Errorf("%q: %d lines on stderr, want at most 3 (no help dump):\n%s", tc.args, n, stderr.String())
			}
		})
	}
	// -v12 wrote revision 12 flattened, as -v 12 does.
	series, err := os.ReadFile(filepath.Join(dir, "flat12", "series"))
	if err != nil || !bytes.Contains(series, []byte("12")) {
		t.Errorf("spec -v12: series file %q (%v)", series, err)
	}
}

// TestHelpFlagsAsTyped: help lists the flags as they are typed (--base,
// -v) and not the flags that are part of a command's name (test --qemu).
func TestHelpFlagsAsTyped(t *testing.T) {
	for _, c := range commands() {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"help"}, strings.Fields(c.name)...), &stdout, &stderr); code != 0 {
			t.Fatalf("help %s: exit %d", c.name, code)
		}
		for _, line := range strings.Split(stdout.String(), "\n") {
			if m := regexp.MustCompile(`^  (-+)(\S+)`).FindStringSubmatch(line); m != nil {
				if want := dashed(m[2]); m[1]+m[2] != want {
					t.Errorf("help %s lists %q, want %q", c.name, m[1]+m[2], want)
				}
				if m[2] == "qemu" || m[2] == "build" {
					t.Errorf("help %s lists the internal flag %s", c.name, m[1]+m[2])
				}
			}
		}
		if c.name == "gen" && !strings.Contains(stdout.String(), "\n  --base string\n") {
			t.Errorf("help gen does not list --base string:\n%s", stdout.String())
		}
	}
}

// TestJSONAsWritten: JSON writes mail addresses as they are (not
// \u003c) and an empty list as [], never null.
func TestJSONAsWritten(t *testing.T) {
	seed, err := oracle.SeedPath() // the posted v11: verify quotes its trailers
	if err != nil {
		t.Fatal(err)
	}
	var vout bytes.Buffer
	run([]string{"verify", "--json", "--build-dir", "none", seed}, &vout, &bytes.Buffer{})
	if strings.Contains(vout.String(), `\u003c`) || !strings.Contains(vout.String(), "<") {
		t.Errorf("verify --json escapes or lacks addresses:\n%s", vout.String())
	}
	spec := filepath.Join(t.TempDir(), "spec")
	if code := run([]string{"spec", "-o", spec}, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatal("spec -o failed")
	}
	for _, mbox := range []string{"replies.mbox", "malformed.mbox"} {
		var stdout, stderr bytes.Buffer
		args := []string{"trailers", "--spec", spec, "--dry-run", "--json", filepath.Join("..", "..", "revision", "trailers", "testdata", mbox)}
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%q: exit %d, %s", args, code, stderr.String())
		}
		out := stdout.String()
		if strings.Contains(out, `\u003c`) || !strings.Contains(out, "<") {
			t.Errorf("%s: addresses escaped or missing:\n%s", mbox, out)
		}
		if strings.Contains(out, "null") {
			t.Errorf("%s: a list written as null:\n%s", mbox, out)
		}
		if k := regexp.MustCompile(`"[A-Z]\w*":`).FindString(out); k != "" {
			t.Errorf("%s: key %s is not written as the others are (lower case, with _):\n%s", mbox, k, out)
		}
	}
}
