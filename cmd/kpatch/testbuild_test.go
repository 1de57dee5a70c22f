package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/buildtest"
)

func TestWantsBuild(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"--build"}, true},
		{[]string{"--tree", "x", "-build"}, true},
		{[]string{"--build=true"}, true},
		{[]string{"--build=false"}, false},
		{[]string{"--qemu"}, false},
		{[]string{"--", "--build"}, false},
	}
	for _, tc := range tests {
		if got := wantsBuild(tc.args); got != tc.want {
			t.Errorf("wantsBuild(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// Bad input to kpatch test --build: one line naming the cause, exit
// status 2 or 1, and nothing built (no build tree created).
func TestTestBuildErrors(t *testing.T) {
	root := t.TempDir()
	notKernel := t.TempDir()
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--config", "x86_64,sparc"}, 2, `unknown configuration "sparc": choose among x86_64, x86_64-noia32, i386, um, clang, kcsan, kasan, arm64, default, robot`},
		{[]string{"--configs", "robot,sparc"}, 2, `--configs: unknown configuration "sparc"`},
		{[]string{"--configs", " , "}, 2, "--configs: no configuration given"},
		{[]string{"--jobs", "0"}, 2, "--jobs must be 1 or more"},
		{[]string{"--sparse", "maybe"}, 2, `--sparse "maybe": give auto, yes or no`},
		{[]string{"--tree", notKernel, "--plain"}, 2, "not a Linux kernel tree"},
		// Checked before the series is generated or a tree unpacked.
		{[]string{"--tree", notKernel, "--plain", "--jobs", "100000"}, 2, "--jobs 100000: at most 1024"},
		{[]string{"--tree", notKernel, "--plain", "--cc", "no-such-cc"}, 2, `--cc "no-such-cc": no-such-cc is not installed`},
		{[]string{"--tree", notKernel, "--plain", "--cc", "ccache"}, 2, "give the compiler ccache runs"},
		{[]string{"--tree", notKernel, "--plain", "--patches", "3", "--from", "10"}, 2, "--from 10 is after the last patch built (--patches 3)"},
		{[]string{"--tree", notKernel, "--plain", "--verbose", "7"}, 2, "--verbose 7"},
		// Checked once the series is generated, before any tree is unpacked.
		{[]string{"--tree", debianTree(t), "--base", "v6.12", "-v", "12", "--from", "99"}, 2, "--from 99: the series has 14 patches"},
		{[]string{"--tree", debianTree(t), "--base", "v6.12", "--patches", "20"}, 2, "--patches 20: the series has 10 patches"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		args := append([]string{"test", "--build", "--build-root", root}, tc.args...)
		if code := run(args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.msg)
		}
		if tc.code == 1 && strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("%q: error is not one line: %q", tc.args, stderr.String())
		}
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("build root has %d entries after failed runs", len(ents))
	}
	if _, err := os.Stat(filepath.Join(notKernel, "kpatch_build")); err == nil {
		t.Errorf("the tree was changed")
	}
}

// TestBuildVerdict: a failed build exits 1 always; a new warning exits 1
// only with --fail-on-new-warnings, when the robot's summary says BUILD
// REGRESSION; a failed check writes no JSON error after the report.
func TestBuildVerdict(t *testing.T) {
	warn := buildtest.Problem{Diag: buildtest.Diag{File: "kernel/unwind/user.c", Line: 45, Severity: "warning", Message: "unused variable 'x'"}}
	patches := []buildtest.PatchInfo{{Number: 1, ID: "user-api", Subject: "s"}}
	clean := &buildtest.Report{Passed: true, Patches: patches,
		Configs: []buildtest.ConfigResult{{Name: "x86_64", Cells: []buildtest.Cell{{Status: buildtest.Pass}}}}}
	warned := &buildtest.Report{Passed: true, Warned: true, Patches: patches,
		Configs: []buildtest.ConfigResult{{Name: "x86_64", Cells: []buildtest.Cell{{Status: buildtest.Warn, Warnings: []buildtest.Problem{warn}}}}}}
	failed := &buildtest.Report{Passed: false, Patches: patches,
		Configs: []buildtest.ConfigResult{{Name: "x86_64", Cells: []buildtest.Cell{{Status: buildtest.Fail}}}}}
	for _, tc := range []struct {
		name      string
		rep       *buildtest.Report
		failOnNew bool
		want      error
	}{
		{"clean", clean, true, nil},
		{"warned", warned, false, nil},
		{"warned, --fail-on-new-warnings", warned, true, errNewWarnings},
		{"failed", failed, false, errBuildFailed},
		{"failed, --fail-on-new-warnings", failed, true, errBuildFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.rep.WriteSummary(&b)
			regression := strings.HasPrefix(b.String(), "BUILD REGRESSION")
			if regression != tc.rep.Regression() {
				t.Errorf("summary %q, Regression() %v", strings.SplitN(b.String(), "\n", 2)[0], tc.rep.Regression())
			}
			err := buildVerdict(tc.rep, tc.failOnNew)
			if err != tc.want {
				t.Errorf("got %v, want %v", err, tc.want)
			}
			if err != nil && !errors.Is(err, errBuildFailed) {
				t.Errorf("%v is not a failed check (exit 1, no JSON error)", err)
			}
		})
	}
}
