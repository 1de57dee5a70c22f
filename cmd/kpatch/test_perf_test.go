package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// An unknown --kernel is bad usage: exit 2, one line naming the known
// kernels, nothing built; with --json the same as an object.
func TestTestQEMUUnknownKernel(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"test", "qemu", "--kernel", "debian-6.1"}, &stdout, &stderr)
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	want := "kpatch test qemu: --kernel \"debian-6.1\": give one of debian-7.2, debian-7.3\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"test", "qemu", "--kernel", "debian-6.1", "--json"}, &stdout, &stderr)
	var obj map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &obj); code != 2 || err != nil || obj["exit"] != float64(2) {
		t.Errorf("--json: exit %d, %q (%v)", code, stdout.String(), err)
	}
}

// --kernel boots no series, and the perf cases have no --extra or --debug:
// those flags with them are bad usage, refused before anything is built.
func TestTestQEMUPerfConflicts(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--kernel", "debian-7.3", "--stack", "x86-6.19"}, "--kernel debian-7.3 does not take --stack"},
		{[]string{"--kernel", "debian-7.3", "--tree", "/nonexistent", "--base", "v6.12"}, "does not take --base, --tree"},
		{[]string{"--perf", "--debug"}, "--perf does not take --debug"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"test", "qemu"}, tt.args...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}
