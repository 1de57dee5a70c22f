package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
)

// TestInterruptedWritesNothingMore: a command interrupted while it works
// (test qemu during the boot: QEMU killed, the boot's cases all failed)
// writes nothing more on standard output or standard error; kpatch says
// "interrupted" once, and with --json writes only {"error":
// "interrupted", "exit": 130}. The report of the cut boot ("FAIL ... 0
// passed, 36 failed", "passed": false) was printed before "interrupted".
func TestInterruptedWritesNothingMore(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		c := command{name: "test qemu", run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fmt.Fprintln(stderr, "boot: starting QEMU")
			syscall.Kill(os.Getpid(), syscall.SIGINT) // Ctrl-C during the boot
			<-ctx.Done()
			fmt.Fprintln(stderr, "qemu: killed")
			fmt.Fprintln(stdout, `{"passed": false}`)
			fmt.Fprintln(stdout, "FAIL v16: 0 passed, 36 failed")
			return ErrTestFailed
		}}
		var args []string
		want := ""
		if asJSON {
			args = []string{"--json"}
			want = "{\n  \"error\": \"interrupted\",\n  \"exit\": 130\n}\n"
		}
		var stdout, stderr bytes.Buffer
		code := runCommand(c, args, &checkedWriter{w: &stdout}, &stderr)
		if code != 130 || stdout.String() != want || stderr.String() != "boot: starting QEMU\nkpatch test qemu: interrupted\n" {
			t.Errorf("--json %v: exit %d, stdout %q, stderr %q; want 130, stdout %q and only \"interrupted\" after the boot started", asJSON, code, stdout.String(), stderr.String(), want)
		}
	}
}
