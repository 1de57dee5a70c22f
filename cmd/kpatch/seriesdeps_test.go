package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// TestSeriesDeps: the x86 series' dependencies are all found with v16
// below it (exit 0); the cover letter it writes, checked with v15 below
// it instead, misses v16's first patch (exit 1, named); a file without a
// cover letter naming dependencies is bad input (exit 2).
func TestSeriesDeps(t *testing.T) {
	tree := testenv.KernelTree(t)
	var stdout, stderr bytes.Buffer
	base := []string{"series", "deps", "--tree", tree, "--base", "v6.12", "--stack", "x86"}
	if code := run(base, &stdout, &stderr); code != 0 || strings.Count(stdout.String(), " of v16 below it (") != 10 ||
		!strings.Contains(stderr.String(), "x86 v2 on v16: 11 dependencies, 0 missing") {
		t.Fatalf("on v16: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	out := filepath.Join(t.TempDir(), "x86")
	if code := run([]string{"gen", "--tree", tree, "--base", "v6.12", "--stack", "x86", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatal(stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(append(base, "--on", "v15", out), &stdout, &stderr); code != 1 ||
		!strings.Contains(stdout.String(), ": MISSING: neither in v6.12's history nor in v15 below it\n") ||
		strings.Count(stdout.String(), "MISSING") != 1 || !strings.Contains(stderr.String(), "1 missing") {
		t.Errorf("on v15: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	patch, _ := filepath.Glob(filepath.Join(out, "*-0001-*.patch"))
	only := filepath.Join(t.TempDir(), "only")
	os.Mkdir(only, 0o755)
	b, _ := os.ReadFile(patch[0])
	os.WriteFile(filepath.Join(only, filepath.Base(patch[0])), b, 0o644)
	stderr.Reset()
	if code := run(append(base, only), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "no message names a base-commit or prerequisite-patch-id") {
		t.Errorf("no cover letter: exit %d, %q", code, stderr.String())
	}
}
