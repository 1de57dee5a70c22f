package buildtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/plumbing/kbuild"
)

// TestKernelDocNotRun: kernel-doc that cannot run is a check not made
// (*NotRunError, SKIP), never a PASS: the column said PASS when the tree
// had no scripts/kernel-doc, when perl failed, and for the Python
// kernel-doc of Linux 6.16 on, which perl cannot run. A kernel-doc that
// runs and warns is read as before.
func TestKernelDocNotRun(t *testing.T) {
	s, _ := v11(t, "")
	st := newSteps(s)
	n := len(s.Patches)
	for _, tc := range []struct {
		name   string
		script string // "" for none
		why    string // "" when it runs
	}{
		{"none", "", "the tree has no scripts/kernel-doc"},
		{"perl fails", "#!/usr/bin/env perl\ndie \"Can't locate Pod/Usage.pm in @INC\\n\";\n", "Can't locate Pod/Usage.pm"},
		{"python kernel-doc refuses", "#!/usr/bin/env python3\nimport sys\nprint('usage: kernel-doc [-h] ...', file=sys.stderr)\nsys.exit(2)\n", "python3 scripts/kernel-doc failed"},
		{"python kernel-doc warns", "#!/usr/bin/env python3\nimport sys\nprint('Warning: kernel/unwind/user.c:1 no description found', file=sys.stderr)\nsys.exit(1)\n", ""},
		{"perl kernel-doc runs", "#!/usr/bin/perl\nexit 0;\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			if tc.script != "" {
				os.MkdirAll(filepath.Join(src, "scripts"), 0o755)
				if err := os.WriteFile(filepath.Join(src, "scripts", "kernel-doc"), []byte(tc.script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			probs, err := st.kernelDoc(context.Background(), src, n)
			var nr *NotRunError
			switch {
			case tc.why != "" && (!errors.As(err, &nr) || !strings.Contains(nr.Why, tc.why)):
				t.Errorf("err %v, want a NotRunError saying %q", err, tc.why)
			case tc.why == "" && err != nil:
				t.Errorf("err %v, want it to run", err)
			case tc.name == "python kernel-doc warns" && len(probs) != 1:
				t.Errorf("warnings %v, want the one on kernel/unwind/user.c:1", probs)
			}
		})
	}
}

// TestW2NotRun: without scripts/Makefile.extrawarn (or without its W=2
// block) W=2 says why it did not run; its column said PASS.
func TestW2NotRun(t *testing.T) {
	for name, mf := range map[string]string{"none": "", "no W=2 block": "KBUILD_CFLAGS += -Wall\n"} {
		r := &runner{d: kbuild.NewDir(t.TempDir())}
		if mf != "" {
			os.MkdirAll(filepath.Join(r.d.Src, "scripts"), 0o755)
			os.WriteFile(filepath.Join(r.d.Src, "scripts", "Makefile.extrawarn"), []byte(mf), 0o644)
		}
		probs, why := r.w2(context.Background(), 1, nil, nil)
		if len(probs) != 0 || why == "" {
			t.Errorf("%s: %v, %q; want no warnings and why W=2 did not run", name, probs, why)
		}
	}
}

// TestSkipShown: a check that did not run shows SKIP in its cells and
// says why once under the table.
func TestSkipShown(t *testing.T) {
	why := "scripts/kernel-doc needs python3, which is not installed (apt-get install python3)"
	r := &Report{Patches: []PatchInfo{{1, "a", "x: a"}, {2, "b", "x: b"}}, Configs: []ConfigResult{
		{Name: "x86_64", Cells: []Cell{{Status: Pass}, {Status: Pass}}},
		{Name: CheckKernelDoc, Check: true, Cells: []Cell{{Status: Skip, Skipped: why}, {Status: Skip, Skipped: why}}},
	}}
	var b strings.Builder
	r.WriteText(&b)
	out := b.String()
	if strings.Count(out, "SKIP") != 3 || strings.Count(out, why) != 1 || strings.Contains(out, "PASS  SUBJECT") {
		t.Errorf("report:\n%s", out)
	}
}
