package boottest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/plumbing/ktap"
	"kpatch/series"
	"kpatch/spec"
)

// stackRevision is revision 0 (the newest) with the stacked series name
// on it, as --stack NAME selects it.
func stackRevision(t *testing.T, stack string) *spec.Revision {
	t.Helper()
	sp, err := series.LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	if stack == "" {
		r, err := sp.Revision(11)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r, err := sp.Stack(stack, 0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// kunitStatuses runs the kernel's kunit.py parse (python3 and the Debian
// tree's tools/testing/kunit) on a console and returns the status it
// gives each case, by "mode/case".
func kunitStatuses(t *testing.T, console []byte) map[string]string {
	t.Helper()
	py := testenv.Tool(t, "python3", "python3")
	kunit := filepath.Join(testenv.KernelTree(t), "tools/testing/kunit/kunit.py")
	if _, err := os.Stat(kunit); err != nil {
		t.Fatalf("the Debian tree has no kunit.py: %v", err)
	}
	dir := t.TempDir()
	log, js := filepath.Join(dir, "console.log"), filepath.Join(dir, "kunit.json")
	if err := os.WriteFile(log, console, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, kunit, "parse", "--json="+js, log).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("kunit.py parse: %v\n%s", err, out)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatalf("kunit.py parse wrote no JSON: %v\n%s", err, out)
	}
	var root struct {
		SubGroups []struct {
			Name      string
			TestCases []struct{ Name, Status string } `json:"test_cases"`
		} `json:"sub_groups"`
	}
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range root.SubGroups {
		for _, c := range g.TestCases {
			got[g.Name+"/"+c.Name] = c.Status
		}
	}
	return got
}

// ktapStatus is the guest's verdict on a case as KTAP gives it, in
// kunit.py's words.
func ktapStatus(s ktap.Status) string {
	switch s {
	case ktap.Pass:
		return "PASS"
	case ktap.Skip:
		return "SKIP"
	case ktap.Fail:
		return "FAIL"
	}
	return "ERROR"
}

// TestRecheckSavedConsole checks saved consoles of real boots again, as
// kpatch test qemu --console does: the report is the one the boot gave
// (every case the guest ran, checked against the walker of the revision
// booted), and its KTAP reads as kunit.py parse reads it.
func TestRecheckSavedConsole(t *testing.T) {
	tests := []struct {
		name, dir, stack string
		edit             func(string) string
		pass             bool
		fails            []string // "mode/case" that must fail
		cases            int      // per mode
	}{
		{name: "x86 series on v16", dir: "stack-x86", stack: "x86", pass: true, cases: 18},
		{name: "x86 series on v16, extra cases", dir: "stack-x86-extra", stack: "x86", pass: true, cases: 20},
		{name: "x86 as 6.19 merged it on v16", dir: "stack-x86-619", stack: "x86-6.19", pass: true, cases: 20},
		// One compat trace of 6.19 with a frame altered: the ia32
		// traces are compared with the walker frame by frame.
		{name: "x86 as 6.19 merged it, an ia32 frame altered", dir: "stack-x86-619", stack: "x86-6.19", cases: 20,
			edit: func(s string) string {
				i := strings.Index(s, "mode=compat")
				j := i + strings.Index(s[i:], "kernel: 0x")
				k := j + len("kernel: ") + strings.IndexByte(s[j+len("kernel: "):], ' ')
				k = k + 1 + strings.IndexByte(s[k+1:], ' ') // the second entry
				return s[:j] + "kernel: 0x804a000 0x804a000" + s[k:]
			},
			fails: []string{"unwind_ia32/depth_1"}},
		// The uprobe's trace (missing entry_mid: no start-of-function
		// rule in this revision) is compared with the walker too.
		{name: "x86 series on v16, func_start's trace altered", dir: "stack-x86-extra", stack: "x86", cases: 20,
			edit: func(s string) string {
				i := strings.Index(s, "uprobe=554889e5")
				j := i + strings.Index(s[i:], "kernel: 0x")
				k := j + len("kernel: ") + strings.IndexByte(s[j+len("kernel: "):], ' ')
				return s[:j] + "kernel: 0x401000" + s[k:]
			},
			fails: []string{"unwind_x86_64/func_start"}},
		{name: "v11", dir: "pass", pass: true, cases: 18},
		{name: "v11, a kernel frame altered", dir: "pass", edit: alterFrame, fails: []string{"unwind_x86_64/depth_8"}, cases: 18},
		// exitbug was saved before faultable_sync existed:
		// the cases are those its programs ran.
		{name: "v11, exit hook after exit_mm", dir: "exitbug", fails: []string{"unwind_x86_64/exit_pending", "unwind_ia32/exit_pending"}, cases: 17},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			console := readGz(t, filepath.Join(tc.dir, "console.log.gz"))
			if tc.edit != nil {
				console = []byte(tc.edit(string(console)))
			}
			syms, err := ProgramSymbols(filepath.Join("testdata", tc.dir))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Recheck(stackRevision(t, tc.stack), console, syms, "saved.log")
			if err != nil {
				t.Fatal(err)
			}
			if rep.Passed != tc.pass || len(rep.Cases) != 2*tc.cases || !rep.Rechecked {
				t.Fatalf("passed %v with %d cases (rechecked %v), want %v with %d; problems %q", rep.Passed, len(rep.Cases), rep.Rechecked, tc.pass, 2*tc.cases, rep.Problems)
			}
			failed := map[string]bool{}
			for _, c := range rep.Cases {
				if c.Status == Fail {
					failed[c.Mode+"/"+c.Name] = true
				}
			}
			for _, f := range tc.fails {
				if !failed[f] {
					t.Errorf("%s did not fail", f)
				}
				delete(failed, f)
			}
			if len(failed) > 0 {
				t.Errorf("other cases failed: %v", failed)
			}
			var b bytes.Buffer
			rep.WriteText(&b)
			if !strings.Contains(b.String(), "checked again without booting; console log: saved.log") {
				t.Errorf("summary does not say the log was checked again:\n%s", b.String())
			}
			// The guest's verdicts, as kunit.py parse reads the same log.
			kunit := kunitStatuses(t, console)
			root, _ := ktap.Parse(bytes.NewReader(console))
			n := 0
			for _, m := range Modes {
				for _, c := range root.Find(m.Subtest).Subtests {
					n++
					if got, want := kunit[m.Subtest+"/"+c.Name], ktapStatus(c.Status); got != want {
						t.Errorf("%s/%s: kunit.py says %s, kpatch's KTAP %s", m.Subtest, c.Name, got, want)
					}
				}
			}
			if n != len(kunit) || n != 2*tc.cases {
				t.Errorf("kunit.py read %d cases, kpatch %d, want %d", len(kunit), n, 2*tc.cases)
			}
		})
	}
}

// A console names the series booted on its command line; checked against
// the walker of another, it is refused.
func TestRecheckOtherSeries(t *testing.T) {
	console := string(readGz(t, "stack-x86/console.log.gz"))
	tagged := strings.Replace(console, "Command line: ", "Command line: kpatch.series="+SeriesTag("x86 v2 on v16")+" ", 1)
	syms, err := ProgramSymbols("testdata/stack-x86")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Recheck(stackRevision(t, "x86"), []byte(tagged), syms, "c"); err != nil {
		t.Errorf("the series booted: %v", err)
	}
	_, err = Recheck(stackRevision(t, ""), []byte(tagged), syms, "c")
	var other *OtherSeriesError
	if !errors.As(err, &other) || other.Booted != "x86_v2_on_v16" || other.Selected != "v11" {
		t.Errorf("checked as v11: %v, want an OtherSeriesError naming both", err)
	}
}

// 6.19's boot checked as the x86 series': refused by its tag; without
// the tag, every deferred compat trace fails where x86 v2 refuses them.
func TestRecheck619AsX86(t *testing.T) {
	console := string(readGz(t, "stack-x86-619/console.log.gz"))
	syms, err := ProgramSymbols("testdata/stack-x86-619")
	if err != nil {
		t.Fatal(err)
	}
	var other *OtherSeriesError
	if _, err := Recheck(stackRevision(t, "x86"), []byte(console), syms, "c"); !errors.As(err, &other) || other.Booted != "x86-6.19_v1_on_v16" {
		t.Fatalf("checked as x86 v2: %v, want an OtherSeriesError", err)
	}
	untagged := strings.Replace(console, "kpatch.series=x86-6.19_v1_on_v16 ", "", 1)
	rep, err := Recheck(stackRevision(t, "x86"), []byte(untagged), syms, "c")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range rep.Cases {
		if c.Mode == "unwind_ia32" && c.Status == Fail && strings.Contains(c.Reason, "which the revision refuses") {
			n++
		}
	}
	if want := len(refusedFails()) + 1; n != want || rep.Passed {
		t.Errorf("%d ia32 cases failed on deferred compat traces, want %d (every case with a deferred request, nmi_current's too)", n, want)
	}
}

func TestSeriesTag(t *testing.T) {
	for in, want := range map[string]string{
		"v13":                           "v13",
		"x86 v2 on v16":                 "x86_v2_on_v16",
		"x86 v2 on v15 (posted on v16)": "x86_v2_on_v15_posted_on_v16",
	} {
		if got := SeriesTag(in); got != want {
			t.Errorf("SeriesTag(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProgramSymbolsMissing(t *testing.T) {
	_, err := ProgramSymbols(t.TempDir())
	if !errors.Is(err, ErrNoPrograms) || !strings.Contains(err.Error(), "unwind_test64.syms") {
		t.Errorf("empty directory: %v", err)
	}
}
