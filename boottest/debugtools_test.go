package boottest

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/qemu"
)

// TestQEMUFilterAndExec boots the kernel TestQEMU builds (the build is
// shared) as a debugging user does: with --filter's globs the guest runs
// the selected cases only and the table holds them alone; with --exec a
// busybox command runs in the guest instead of the cases, with the test
// driver there, and its exit status comes back; --exec sh reads what is
// typed.
func TestQEMUFilterAndExec(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	tree := requireTools(t, ctx)
	if _, err := staticBusybox(); err != nil {
		testenv.Missing(t, err.Error(), "apt-get install busybox-static")
	}
	s, err := seriestest.Generate(ctx, seriestest.Options{Tree: tree, Base: "v6.12", Version: bootRevision, Stack: bootStack, WithPrerequisite: true})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		BuildOptions: BuildOptions{BuildDir: buildDir(t), Log: testLog{t}},
		Accel:        qemu.AccelTCG,
		BootTimeout:  5 * time.Minute,
		Filter:       []string{"depth_1", "ia32.broken_*"},
	}
	rep, err := Run(ctx, s, o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range rep.Cases {
		got = append(got, strings.TrimPrefix(c.Mode, "unwind_")+"."+c.Name+"="+string(c.Status))
	}
	want := "x86_64.depth_1=pass ia32.depth_1=pass ia32.broken_fp_unmapped=pass ia32.broken_fp_down=pass"
	if strings.Join(got, " ") != want || !rep.Passed {
		t.Errorf("filtered run: %s (passed %v), want %s; console %s", strings.Join(got, " "), rep.Passed, want, rep.ConsoleLog)
	}

	var console bytes.Buffer
	o.Filter, o.Console = nil, &console
	o.Exec = "echo kpatch-exec-says-$((6*7)); test -e /proc/kpatch_unwind || exit 1; unwind_test64 depth_8 >/dev/null; exit 7"
	rep, err = Run(ctx, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Exec == nil || *rep.Exec != 7 || rep.Passed || len(rep.Cases) != 0 {
		t.Errorf("exec: status %v, passed %v, %d cases; want 7, false, none", rep.Exec, rep.Passed, len(rep.Cases))
	}
	for _, w := range []string{"kpatch-exec-says-42", "# case: depth_8", "ok 2 depth_8", "kpatch-exec: exit 7"} {
		if !strings.Contains(console.String(), w) {
			t.Errorf("console lacks %q", w)
		}
	}
	// A shell reading what is typed: the pipe's lines wait for the
	// guest's console and reach the shell.
	console.Reset()
	o.Exec, o.Stdin = "sh", strings.NewReader("echo typed-$((6*7))\nexit 4\n")
	rep, err = Run(ctx, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Exec == nil || *rep.Exec != 4 || !strings.Contains(console.String(), "\ntyped-42") {
		t.Errorf("sh with typed input: status %v, want 4 and typed-42 on the console:\n%s", rep.Exec, console.String())
	}
	if _, err := os.Stat(rep.BuildDir + "/initramfs.cpio"); err != nil {
		t.Errorf("the initramfs the reproducer needs is gone: %v", err)
	}
}
