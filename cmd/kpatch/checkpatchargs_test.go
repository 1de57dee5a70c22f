package main

import (
	"bytes"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// TestVerifyCheckpatchArgs: --checkpatch-args passes --strict through to
// the tree's checkpatch.pl (its CHECK findings appear, as warnings), and
// implies --checkpatch; an option kpatch gives itself is refused with exit
// 2 before anything is read.
func TestVerifyCheckpatchArgs(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"verify", "--checkpatch-args", "--strict --terse"}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), `--checkpatch-args: "--terse" is not passed to checkpatch.pl`) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("--terse: exit %d, %q", code, stderr.String())
	}
	tree := testenv.KernelTree(t)
	verifyOut := func(args ...string) string {
		t.Helper()
		stdout.Reset()
		stderr.Reset()
		code := run(append([]string{"verify", "--tree", tree, "--base", "v6.12", "-v", "11", "--build-dir", "none"}, args...), &stdout, &stderr)
		if code > 1 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		return stdout.String()
	}
	plain := verifyOut("--checkpatch")
	strict := verifyOut("--checkpatch-args", "--strict")
	if strings.Contains(plain, "MACRO_ARG_REUSE") || !strings.Contains(strict, "MACRO_ARG_REUSE") {
		t.Errorf("MACRO_ARG_REUSE (a --strict check) in the plain run %v, in the --strict one %v",
			strings.Contains(plain, "MACRO_ARG_REUSE"), strings.Contains(strict, "MACRO_ARG_REUSE"))
	}
}
