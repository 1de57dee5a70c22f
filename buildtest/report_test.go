package buildtest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestReportSummaryFrom: after --from the summary says how many patches
// were built, not the length of the series.
func TestReportSummaryFrom(t *testing.T) {
	for _, tc := range []struct {
		from   int
		series string
		want   string
	}{
		{0, "", "PASS: 3 patches x 2 configurations,"},
		{2, "", "PASS: 2 of 3 patches built (patch 1 applied without a build of its own, built with patch 2) x 2 configurations,"},
		{3, "", "PASS: 1 of 3 patches built (patches 1-2 applied without builds of their own, built with patch 3) x 2 configurations,"},
		{3, "x86 v2 on v15 (posted on v16)", "PASS: x86 v2 on v15 (posted on v16) on v6.12, 1 of 3 patches built (patches 1-2 applied"},
	} {
		var cells []Cell
		for k := 1; k <= 3; k++ {
			st := Pass
			if k < tc.from {
				st = NotBuilt
			}
			cells = append(cells, Cell{Status: st})
		}
		rep := &Report{Series: tc.series, Version: 12, Base: "v6.12", Passed: true, Patches: []PatchInfo{{1, "a", "s1"}, {2, "b", "s2"}, {3, "c", "s3"}},
			Configs: []ConfigResult{{Name: "x86_64", Cells: cells}, {Name: "i386", Cells: cells}}}
		var b bytes.Buffer
		rep.WriteText(&b)
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("--from %d: summary\n%s\nwant %q", tc.from, b.String(), tc.want)
		}
	}
}

func TestReportText(t *testing.T) {
	e := Problem{Diag: Diag{File: "kernel/unwind/user.c", Line: 70, Severity: "error", Message: "implicit declaration of function 'f'",
		Context: []string{"   70 |  if (f(state))"}}, Object: "kernel/unwind/user.o",
		Origin: Origin{Patch: 3, PatchID: "compat-fp", Source: "files/kernel/unwind/user.c.tmpl:66"}}
	w := Problem{Diag: Diag{File: "kernel/unwind/user.c", Line: 20, Severity: "warning", Message: "'g' defined but not used [-Wunused-function]"},
		Object: "kernel/unwind/user.o", Origin: Origin{Patch: 2, PatchID: "fp", Source: "files/kernel/unwind/user.c.tmpl:15"}}
	m := Problem{Diag: Diag{File: "arch/x86/kernel/ptrace.c", Line: 367, Severity: "warning", Message: "sparse: incorrect type in initializer (different address spaces)"},
		Object: "arch/x86/kernel/ptrace.o", Origin: Origin{Patch: 5, PatchID: "cache", Source: "v11/05-cache.patch:20"}, MovedFrom: "arch/x86/events/core.c"}
	cells := []Cell{{Status: Pass}, {Status: Warn, Warnings: []Problem{w}}, {Status: Fail, Errors: []Problem{e}},
		{Status: Fail, Errors: []Problem{e}}, {Status: Warn, Warnings: []Problem{m}}}
	markSince(cells)
	rep := &Report{Version: 11, Base: "v6.12", Flags: []string{"W=1"},
		Patches: []PatchInfo{{1, "user-api", "s1"}, {2, "fp", "s2"}, {3, "compat-fp", "s3"}, {4, "faultable", "s4"}, {5, "cache", "s5"}},
		Configs: []ConfigResult{{Name: "x86_64", BaseBuilt: true, Cells: cells}, {Name: "i386", BaseError: "arch/x86/a.c:1: error: x"}}}
	var b bytes.Buffer
	rep.WriteText(&b)
	out := b.String()
	t.Log(out)
	for _, want := range []string{
		" 2 fp         WARN 1",
		" 3 compat-fp  FAIL ",
		" 4 faultable  FAIL (since 3) ",
		" 0 base       built           FAIL",
		"i386: the base does not build: arch/x86/a.c:1: error: x",
		"patch 3 (compat-fp), x86_64: kernel/unwind/user.c:70: error: implicit declaration of function 'f'\n         70 |  if (f(state))\n    compiling kernel/unwind/user.o; line from patch 3 (compat-fp), written at files/kernel/unwind/user.c.tmpl:66\n    also at patch 4\n",
		"patch 2 (fp), x86_64: kernel/unwind/user.c:20: warning: 'g' defined but not used",
		"written at v11/05-cache.patch:20\n    moved code: the base has this warning in arch/x86/events/core.c, where patch 5 removed the line\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Count(out, "implicit declaration") != 1 {
		t.Errorf("the error of patches 3 and 4 is shown %d times, want once", strings.Count(out, "implicit declaration"))
	}
	if cells[3].Errors[0].Since != 3 || cells[2].Errors[0].Since != 3 || cells[1].Warnings[0].Since != 2 {
		t.Errorf("since: %d %d %d", cells[2].Errors[0].Since, cells[3].Errors[0].Since, cells[1].Warnings[0].Since)
	}
	b.Reset()
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Configs[0].Cells[4].Warnings[0].MovedFrom != "arch/x86/events/core.c" {
		t.Errorf("JSON round trip lost moved_from: %+v", back.Configs[0].Cells[4].Warnings[0])
	}
	if back.Configs[0].Cells[3].Errors[0].Origin.Source != "files/kernel/unwind/user.c.tmpl:66" {
		t.Errorf("JSON round trip lost the origin: %+v", back.Configs[0].Cells[3].Errors[0])
	}
}

// A failure stays in the table, "since" its patch, until a patch compiles
// the object again.
func TestInherit(t *testing.T) {
	e := Problem{Diag: Diag{File: "kernel/fork.c", Line: 3, Severity: "error", Message: "x"}, Object: "kernel/fork.o"}
	w := Problem{Diag: Diag{File: "kernel/exit.c", Line: 9, Severity: "warning", Message: "y"}, Object: "kernel/exit.o"}
	cells := []Cell{
		{Status: Fail, Objects: []string{"kernel/fork.o", "kernel/exit.o"}, Errors: []Problem{e}, Warnings: []Problem{w}},
		{Status: Pass, Objects: []string{"kernel/sys.o"}},                   // fork.o and exit.o not compiled: both carried
		{Status: Pass, Objects: []string{"kernel/fork.o"}},                  // fork.o compiled again, fine now; exit.o carried
		{Status: Pass, Objects: []string{"kernel/exit.o", "kernel/fork.o"}}, // both fine
	}
	inherit(cells)
	markSince(cells)
	got := []string{}
	for _, c := range cells {
		got = append(got, c.Status)
	}
	if strings.Join(got, " ") != "FAIL FAIL WARN PASS" {
		t.Fatalf("statuses %v, want FAIL FAIL WARN PASS", got)
	}
	if cells[1].Errors[0].Since != 1 || cells[2].Warnings[0].Since != 1 {
		t.Errorf("since: %+v %+v", cells[1].Errors, cells[2].Warnings)
	}
}

// TestInheritLinked: objtool's warnings on vmlinux.o are carried into a
// patch that did not link, and not into one that linked again (kcsan,
// the 6.19 series: patch 25's noinstr warnings, which patch 26 fixes,
// were carried into 26, whose own link gave none).
func TestInheritLinked(t *testing.T) {
	w := Problem{Diag: Diag{File: LinkObject, Severity: "warning", Message: "objtool: syscall_exit_to_user_mode+0x7e: call to __kcsan_check_access() leaves .noinstr.text section"}, Object: LinkObject}
	for _, c := range []struct {
		name   string
		linked bool
		want   string
	}{
		{"relinked", true, "WARN PASS"},
		{"not linked", false, "WARN WARN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cells := []Cell{
				{Status: Warn, Objects: []string{"kernel/entry/common.o"}, Warnings: []Problem{w}, Linked: true},
				{Status: Pass, Objects: []string{"kernel/entry/common.o"}, Linked: c.linked},
			}
			inherit(cells)
			if got := cells[0].Status + " " + cells[1].Status; got != c.want {
				t.Errorf("statuses %s, want %s", got, c.want)
			}
		})
	}
}
