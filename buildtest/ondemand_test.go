package buildtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/plumbing/cache"
)

// verdicts is a report's columns as the robot would tell them: each
// cell's status, its errors and its new warnings (file, warning without
// line numbers, the patch that wrote the line, since when, moved from).
func verdicts(rep *Report) []string {
	var out []string
	for _, c := range rep.Configs {
		for k, cell := range c.Cells {
			out = append(out, fmt.Sprintf("%s %d %s", c.Name, k+1, cell.Status))
			for _, p := range cell.Errors {
				out = append(out, fmt.Sprintf("%s %d error %s patch %d", c.Name, k+1, p.Key(), p.Origin.Patch))
			}
			for _, p := range cell.Warnings {
				out = append(out, fmt.Sprintf("%s %d warning %s patch %d since %d moved %q", c.Name, k+1, p.Key(), p.Origin.Patch, p.Since, p.MovedFrom))
			}
		}
	}
	return out
}

// TestBaseOnDemandSameVerdicts builds v11's first patches in x86_64 with
// the base known both ways: built in full first (BaseFull), and asked
// object by object where a warning of the series' build is in question
// (BaseOnDemand). Every cell's status, errors and new warnings must be
// the same, for the series as it is and for mutants that add a warning to
// kernel/fork.c, which warns at the base, and that repeat a warning the
// base has there. Each method has its own build root under the cache;
// ccache (when installed) makes the second method's compiles, and later
// runs, cheap.
func TestBaseOnDemandSameVerdicts(t *testing.T) {
	testenv.Full(t, "builds kernels: the base and the series in full, tinyconfig x86_64")
	if os.Getenv("KPATCH_BUILD_MATRIX") == "" {
		t.Skip("builds kernels (cold: two tinyconfig builds and the base's objects): set KPATCH_BUILD_MATRIX=1 to run it")
	}
	root, err := cache.BuildDir("basetest")
	if err != nil {
		t.Fatal(err)
	}
	cc := ""
	if _, err := lookPath("ccache"); err == nil {
		cc = "ccache gcc"
	}
	tests := []struct {
		name  string
		edits [][3]string
		// check is what the report of either method must show besides
		// being the same as the other's.
		check func(t *testing.T, rep *Report)
	}{
		{name: "series", check: func(t *testing.T, rep *Report) {}},
		{
			name: "new warning in a file the base warns in",
			edits: [][3]string{{"v11/faultable.patch",
				"+\tunwind_task_free(tsk);\n",
				"+\tunwind_task_free(tsk);\n+\t{ int kpatch_fork_unused; }\n"}},
			check: func(t *testing.T, rep *Report) {
				c := cell(t, rep, "x86_64", 4)
				n := 0
				for _, w := range c.Warnings {
					if strings.Contains(w.Message, "kpatch_fork_unused") && w.File == "kernel/fork.c" && w.Origin.Patch == 4 {
						n++
					}
				}
				if c.Status != Warn || n != 1 {
					t.Errorf("patch 4: %s with %d warnings about kpatch_fork_unused, want WARN with one: %+v", c.Status, n, c.Warnings)
				}
			},
		},
		{
			// kernel/fork.c warns, at the base, of spin_lock_irq() on
			// current->sighand->siglock (an __rcu pointer) in
			// copy_process(): the same call again is the same warning.
			name: "a base warning repeated",
			edits: [][3]string{{"v11/faultable.patch",
				"+\tunwind_task_init(p);\n",
				"+\tunwind_task_init(p);\n+\tspin_lock_irq(&current->sighand->siglock);\n+\tspin_unlock_irq(&current->sighand->siglock);\n"}},
			check: func(t *testing.T, rep *Report) {
				for _, w := range cell(t, rep, "x86_64", 4).Warnings {
					if w.File == "kernel/fork.c" {
						t.Errorf("patch 4: a warning in kernel/fork.c the base has: %s", w.Diag)
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := ""
			if len(tc.edits) > 0 {
				spec = mutate(t, tc.edits...)
			}
			s, _ := v11(t, spec)
			got := map[string][]string{}
			for _, method := range []string{BaseFull, BaseOnDemand} {
				rep, err := Run(context.Background(), s, Options{
					BuildRoot: filepath.Join(root, method), Configs: []string{"x86_64"}, From: 4, Patches: 4,
					Jobs: 2, CC: cc, BaseBuild: method, Log: testWriter{t},
				})
				if err != nil {
					t.Fatalf("%s: %v", method, err)
				}
				tc.check(t, rep)
				got[method] = verdicts(rep)
				t.Logf("%s:\n%s", method, strings.Join(got[method], "\n"))
			}
			if !slices.Equal(got[BaseFull], got[BaseOnDemand]) {
				t.Errorf("the verdicts differ:\nfull:\n%s\non demand:\n%s", strings.Join(got[BaseFull], "\n"), strings.Join(got[BaseOnDemand], "\n"))
			}
			// The premise: kernel/fork.c warns at the base, which the
			// on-demand run found by compiling kernel/fork.o there.
			st := loadState(filepath.Join(root, BaseOnDemand, "matrix-x86_64"))
			if e, ok := st.Lazy.Objects["kernel/fork.o"]; !ok || !e.Exists || len(e.Warnings) == 0 {
				t.Errorf("kernel/fork.o at the base: %+v (asked: %v), want warnings", e, ok)
			}
		})
	}
}

// TestIsBaseWarningBothWays asks the full method's question and the
// on-demand one's, once the on-demand base is known in full, about the
// same warnings: the answers must be the same. The base warns in
// kernel/fork.o (a .c warning and a header's) and in kernel/exit.o (the
// same header's); kernel/unwind/user.o is not at the base.
func TestIsBaseWarningBothWays(t *testing.T) {
	d := func(file, msg string) Diag { return Diag{File: file, Line: 7, Severity: "warning", Message: msg} }
	base := map[string][]string{
		"kernel/fork.o": {d("kernel/fork.c", "sparse: old").Key(), d("include/linux/sched.h", "sparse: in a header").Key()},
		"kernel/exit.o": {d("include/linux/sched.h", "sparse: in a header").Key(), d("include/linux/rcu.h", "only exit").Key()},
		LinkObject:      {d("vmlinux.o", "objtool: f+0x1: call").Key()},
	}
	all := map[string]bool{}
	for _, ws := range base {
		for _, w := range ws {
			all[w] = true
		}
	}
	files := map[string]bool{"kernel/fork.c": true, "kernel/exit.c": true, "kernel/sys.c": true, "include/linux/sched.h": true, "include/linux/rcu.h": true}
	baseFile := func(p string) ([]byte, bool, error) { return nil, files[p], nil }
	full := &runner{o: Options{BaseBuild: BaseFull}, state: &state{BaseWarnings: base}, baseWarn: all}
	lazy := &runner{o: Options{BaseBuild: BaseOnDemand}, state: &state{Lazy: lazyBase{Full: true, All: base}}, bsrc: &baseSource{file: baseFile}}
	tests := []struct {
		obj  string
		d    Diag
		want bool
	}{
		{"kernel/fork.o", d("kernel/fork.c", "sparse: old"), true},
		{"kernel/fork.o", d("kernel/fork.c", "sparse: new"), false},
		{"kernel/fork.o", d("include/linux/rcu.h", "only exit"), true},            // a header: any object's
		{"kernel/sys.o", d("include/linux/sched.h", "sparse: in a header"), true}, // no base warnings: any object's
		{"kernel/sys.o", d("kernel/sys.c", "sparse: old"), false},
		{"kernel/unwind/user.o", d("include/linux/sched.h", "sparse: in a header"), true}, // not at the base
		{"kernel/unwind/user.o", d("kernel/unwind/user.c", "sparse: old"), false},
		{"kernel/exit.o", d("kernel/fork.c", "sparse: old"), false}, // exit.o has warnings of its own; a .c file's: its own list only
		{LinkObject, d("vmlinux.o", "objtool: f+0x2: call"), true},
		{LinkObject, d("vmlinux.o", "objtool: g+0x2: call"), false},
	}
	for _, tc := range tests {
		t.Run(tc.obj+" "+tc.d.Message, func(t *testing.T) {
			f, err := full.isBaseWarning(tc.obj, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			l, err := lazy.isBaseWarning(tc.obj, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			if f != tc.want || l != tc.want {
				t.Errorf("full %v, on demand %v, want %v", f, l, tc.want)
			}
		})
	}
}
