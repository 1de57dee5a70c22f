package boottest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/qemu"
	"kpatch/series"
	"kpatch/templates/linux"
)

// requireTools skips the test, with the reason, when a tool the whole run
// needs is missing, and returns the kernel tree.
func requireTools(t testing.TB, ctx context.Context) string {
	t.Helper()
	testenv.Full(t, "builds and boots a kernel, cold about 7 minutes")
	if err := CheckTools(ctx, true); err != nil {
		testenv.Missing(t, err.Error(), "run scripts/setup.sh")
	}
	return testenv.KernelTree(t)
}

type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func buildDir(t testing.TB) string {
	if d := os.Getenv("KPATCH_TEST_BUILD_DIR"); d != "" {
		return d
	}
	d, err := DefaultBuildDir()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// runOnce runs the harness (TCG: the run must not depend on KVM) and logs
// the report.
func runOnce(t testing.TB, ctx context.Context, s *series.Series) *Report {
	t.Helper()
	rep, err := Run(ctx, s, Options{
		BuildOptions: BuildOptions{BuildDir: buildDir(t), Log: testLog{t}},
		Accel:        qemu.AccelTCG,
		BootTimeout:  5 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	t.Log("\n" + b.String())
	return rep
}

// bootStack and bootRevision are what the QEMU tests boot: what kpatch
// test qemu boots by default, v16 with the x86 part as Linux 6.19 merged
// it stacked on it (bootRevision 0: the stacked series' newest), since
// from v15 on the main series selects no x86 unwinder. Booting the same
// series as scripts/test.sh keeps the one build tree warm.
const (
	bootStack    = "x86-6.19"
	bootRevision = 0
)

// TestQEMU builds the series on Debian's 6.12 and runs every case in QEMU.
// The kernel build is cached in the build directory, so only the first run
// on a machine pays for a full build.
func TestQEMU(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	tree := requireTools(t, ctx)
	s, err := seriestest.Generate(ctx, seriestest.Options{Tree: tree, Base: "v6.12", Version: bootRevision, Stack: bootStack, WithPrerequisite: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := runOnce(t, ctx, s)
	if !rep.Passed {
		t.Errorf("self-tests failed; console log %s", rep.ConsoleLog)
	}
}

// TestQEMUBrokenTemplate proves that the comparison catches a wrong frame
// description: with ARCH_INIT_USER_FP_FRAME(ws)'s ra_off off by one word,
// the traces of 64-bit and of IA32 tasks must differ from the walker's
// (6.19 describes both frames with one macro, in units of the task's
// word size).
func TestQEMUBrokenTemplate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	tree := requireTools(t, ctx)
	// An edited copy of the series description, as a maintainer would
	// make with kpatch spec -o DIR, with ra_off one word off in the x86
	// header's template.
	spec := filepath.Join(t.TempDir(), "spec")
	if err := linux.Export(spec); err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join(spec, "files", "arch", "x86", "include", "asm", "unwind_user.h.tmpl")
	good, err := os.ReadFile(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	const ra = ".cfa_off\t=  2*(ws),\t\t\t\\\n\t.ra_off\t\t= -1*(ws),"
	if !strings.Contains(string(good), ra) {
		t.Fatalf("%s has no %q to break", tmpl, ra)
	}
	// Every revision's branch of the template: the one the booted
	// revision renders must be the broken one.
	const broken = ".cfa_off\t=  2*(ws),\t\t\t\\\n\t.ra_off\t\t= -2*(ws),"
	bad := strings.ReplaceAll(string(good), ra, broken)
	if err := os.WriteFile(tmpl, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := seriestest.Generate(ctx, seriestest.Options{Tree: tree, Base: "v6.12", SpecDir: spec, Version: bootRevision, Stack: bootStack, WithPrerequisite: true})
	if err != nil {
		t.Fatal(err)
	}
	if h := string(s.FinalFiles()["arch/x86/include/asm/unwind_user.h"]); !strings.Contains(h, broken) {
		t.Fatalf("the booted series' x86 unwind_user.h does not have the broken ra_off:\n%s", h)
	}
	rep := runOnce(t, ctx, s)
	if rep.Passed {
		t.Fatal("the run passed with a broken ra_off")
	}
	checked := 0
	for _, c := range rep.Cases {
		if (c.Mode == "unwind_x86_64" || c.Mode == "unwind_ia32") && strings.HasPrefix(c.Name, "depth_") {
			checked++
			if c.Status != Fail || !strings.Contains(c.Reason, "differs from the walker") {
				t.Errorf("%s/%s: %s %q, want a walker mismatch", c.Mode, c.Name, c.Status, c.Reason)
			}
		}
	}
	if checked == 0 {
		t.Error("no depth_ case of either mode in the report")
	}
}

// TestQEMUBuildErrorNamesPatches breaks kernel/unwind/deferred.c and
// checks that the build error points at the patches that touched it.
func TestQEMUBuildErrorNamesPatches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	tree := requireTools(t, ctx)
	s, err := seriestest.Generate(ctx, seriestest.Options{Tree: tree, Base: "v6.12", Version: bootRevision, Stack: bootStack, WithPrerequisite: true})
	if err != nil {
		t.Fatal(err)
	}
	const f = "kernel/unwind/deferred.c"
	broken := append(append([]byte{}, s.FinalFiles()[f]...), "\nint kpatch_broken(void) { return undeclared_kpatch_symbol; }\n"...)
	_, err = Build(ctx, s, BuildOptions{BuildDir: buildDir(t), Log: testLog{t}, Files: map[string][]byte{f: broken}})
	var be *BuildKernelError
	if !errors.As(err, &be) {
		t.Fatalf("Build = %v, want a *BuildKernelError", err)
	}
	msg := err.Error()
	t.Log(msg)
	want := "file touched by patch " + joinInts(s.PatchesTouching(f))
	if !strings.Contains(msg, f+":") || !strings.Contains(msg, "undeclared_kpatch_symbol") || !strings.Contains(msg, want) {
		t.Errorf("build error does not name the file, the error and %q:\n%s", want, msg)
	}
}
