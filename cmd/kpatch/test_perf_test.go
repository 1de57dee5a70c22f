package main

import (
	"bytes"
	"encoding/json"
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
