package boottest

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kpatch/plumbing/kbuild"
	"kpatch/series"
	"kpatch/unwind"
	"kpatch/unwind/symtab"
)

func readGz(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testSyms(t *testing.T, dir string) map[string]*symtab.Table {
	t.Helper()
	out := map[string]*symtab.Table{}
	for _, m := range Modes {
		f, err := os.Open(filepath.Join("testdata", dir, m.Program+".syms"))
		if err != nil {
			t.Fatal(err)
		}
		s := new(symtab.Table)
		err = s.AddNM(m.Program, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[m.Subtest] = s
	}
	return out
}

// casesWithout returns Cases() without the named ones (for consoles saved
// before a case was added).
func casesWithout(names ...string) []string {
	var out []string
	for _, c := range Cases() {
		keep := true
		for _, n := range names {
			keep = keep && c != n
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// savedCases are the cases of the saved consoles: those before the cases
// of 6.19's code paths (nmi_current, func_start) were added.
func savedCases() []string { return casesWithout("nmi_current", "func_start") }

func alterFrame(s string) string {
	// The first kernel: line of the x86_64 depth_8 snapshot (id=2).
	i := strings.Index(s, "id=2 tracer=A")
	j := i + strings.Index(s[i:], "kernel: 0x")
	k := j + strings.Index(s[j+len("kernel: "):], " ") + len("kernel: ")
	return s[:j] + "kernel: 0x401000" + s[k:]
}

// Saved consoles of real runs of series v11 on Debian's 6.12 (built by
// series.Generate): testdata/pass, where every case passes (faultable_sync
// is skipped without --extra), and testdata/exitbug, from a series whose
// patch 11 put the do_exit() hook after exit_mm() on 6.12, where
// exit_pending failed (and before faultable_sync existed).
func TestCheckSavedConsole(t *testing.T) {
	tests := []struct {
		name     string
		dir      string
		cases    []string
		edit     func(string) string
		exp      Expectations                   // the revision's (zero: v11's)
		walker   func(*testing.T) unwind.Config // nil: walkerV12
		fails    map[string]string              // "mode/case" -> substring of the reason
		skips    []string                       // cases that must be skipped
		problems []string                       // substrings of run-level problems
	}{
		{
			name:  "all pass",
			dir:   "pass",
			cases: savedCases(),
			edit:  func(s string) string { return s },
			skips: []string{"faultable_sync"},
		},
		{
			name:  "exit hunk after exit_mm",
			dir:   "exitbug",
			cases: casesWithout("faultable_sync", "nmi_current", "func_start"),
			edit:  func(s string) string { return s },
			fails: map[string]string{
				"unwind_x86_64/exit_pending": "trace has 0 entries",
				"unwind_ia32/exit_pending":   "trace has 0 entries",
			},
		},
		{
			name:  "kernel frame altered",
			dir:   "pass",
			cases: savedCases(),
			edit:  alterFrame,
			fails: map[string]string{"unwind_x86_64/depth_8": "differs from the walker"},
			skips: []string{"faultable_sync"},
		},
		{
			// v11's compat traces, checked as a revision that refuses
			// compat tasks (v14 on): every ia32 case that got a
			// deferred trace fails; faultable_sync is skipped there.
			name:  "deferred compat traces where the revision refuses them",
			dir:   "pass",
			cases: savedCases(),
			edit:  func(s string) string { return s },
			exp:   Expectations{CompatRefused: true, CompatUnwind: true},
			fails: refusedFails(),
			skips: []string{"faultable_sync"},
		},
		{
			// A real run of v16 with the x86 series stacked on it
			// (kpatch test --qemu --stack x86): cookies, 510 entries
			// at depth 600, every ia32 request refused.
			name:   "x86 series on v16: compat tasks refused",
			dir:    "stack-x86",
			cases:  savedCases(),
			edit:   func(s string) string { return s },
			exp:    expectationsX86(),
			walker: walkerX86,
			skips:  []string{"unwind_ia32/bench"},
		},
		{
			// The same log with one 64-bit snapshot relabelled as a
			// compat task's: a deferred compat trace fails the case.
			name:   "x86 series on v16: a deferred compat trace",
			dir:    "stack-x86",
			cases:  savedCases(),
			edit:   func(s string) string { return strings.Replace(s, "mode=64 ", "mode=compat ", 1) },
			exp:    expectationsX86(),
			walker: walkerX86,
			fails:  map[string]string{"unwind_x86_64/depth_1": "which the revision refuses"},
			skips:  []string{"unwind_ia32/bench"},
		},
		{
			// The same log checked as a revision that unwinds compat
			// tasks (6.19): a case that gets a refusal instead of
			// traces fails, so none passes by refusal.
			name:   "x86 series' refusals where the revision unwinds compat tasks",
			dir:    "stack-x86",
			cases:  savedCases(),
			edit:   func(s string) string { return s },
			exp:    unwindsCompat(expectationsX86()),
			walker: walkerX86,
			fails:  refusedWhereUnwound(),
			skips:  []string{"unwind_ia32/bench"},
		},
		{
			name:  "warning and truncated console",
			dir:   "pass",
			cases: savedCases(),
			edit: func(s string) string {
				i := strings.Index(s, "# case: timer_irq")
				return s[:i] + "[    1.0] WARNING: CPU: 0 PID: 1 at kernel/unwind/deferred.c:150\n"
			},
			problems: []string{"WARNING: CPU: 0", "never finished", "plan says 18 tests"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			console := readGz(t, filepath.Join(tc.dir, "console.log.gz"))
			walker := walkerV12
			if tc.walker != nil {
				walker = tc.walker
			}
			a := CheckRevision([]byte(tc.edit(string(console))), testSyms(t, tc.dir), tc.cases, walker(t), tc.exp)
			if len(a.Cases) != 2*len(tc.cases) {
				t.Fatalf("%d case results, want %d", len(a.Cases), 2*len(tc.cases))
			}
			for _, c := range a.Cases {
				key := c.Mode + "/" + c.Name
				want, shouldFail := tc.fails[key]
				if tc.problems != nil {
					continue
				}
				skip := false
				for _, s := range tc.skips {
					skip = skip || s == c.Name || s == key
				}
				switch {
				case shouldFail && c.Status != Fail:
					t.Errorf("%s: %s, want fail", key, c.Status)
				case shouldFail && !strings.Contains(c.Reason, want):
					t.Errorf("%s: reason %q, want it to mention %q", key, c.Reason, want)
				case skip && (c.Status != Skip || c.Reason == ""):
					t.Errorf("%s: %s %q, want a skip with a reason", key, c.Status, c.Reason)
				case !shouldFail && !skip && c.Status != Pass:
					t.Errorf("%s: %s (%s), want pass", key, c.Status, c.Reason)
				}
				requests := c.Name != "ebusy" && c.Name != "kthread_einval" && c.Name != "bench" && c.Name != "faultable_sync"
				refused := tc.exp.CompatRefused && c.Mode == "unwind_ia32" && requests
				if refused && c.Status == Pass && (c.Traces != 0 || !strings.HasPrefix(strings.Join(c.Info, "; "), "refused:")) {
					t.Errorf("%s passed without the guest's refusal (traces %d, %q)", key, c.Traces, c.Info)
				}
				if c.Status == Pass && !refused && c.Name != "ebusy" && c.Name != "kthread_einval" && c.Name != "bench" && c.Traces == 0 {
					t.Errorf("%s passed without checking a trace", key)
				}
			}
			all := strings.Join(a.Problems, "\n")
			for _, p := range tc.problems {
				if !strings.Contains(all, p) {
					t.Errorf("problems lack %q:\n%s", p, all)
				}
			}
			if tc.problems == nil && len(a.Problems) > 0 {
				t.Errorf("unexpected problems: %s", all)
			}
			if want := len(tc.fails) == 0 && tc.problems == nil; a.Passed() != want {
				t.Errorf("Passed() = %v, want %v", a.Passed(), want)
			}
		})
	}
}

func TestMismatchReportShowsFrames(t *testing.T) {
	console := alterFrame(string(readGz(t, "pass/console.log.gz")))
	a := Check([]byte(console), testSyms(t, "pass"), Cases(), walkerV12(t))
	var b bytes.Buffer
	(&Report{Cases: a.Cases}).WriteText(&b)
	out := b.String()
	for _, want := range []string{"KERNEL", "WALKER", "EXPECTED", "! 0   0x401000", "ku_syscall+0x", "case_depth_8"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestExpandChain(t *testing.T) {
	tests := []struct {
		in   string
		want string
		err  bool
	}{
		{"a", "a", false},
		{"ku_syscall,rec*3,main", "ku_syscall rec rec rec main", false},
		{"x*0", "", true},
		{"x*y", "", true},
	}
	for _, tc := range tests {
		got, err := ExpandChain(tc.in)
		if (err != nil) != tc.err || strings.Join(got, " ") != tc.want {
			t.Errorf("ExpandChain(%q) = %q, %v", tc.in, got, err)
		}
	}
}

func TestCompareChain(t *testing.T) {
	fr := func(names ...string) []Frame {
		var out []Frame
		for i, n := range names {
			out = append(out, Frame{Addr: uint64(0x1000 + i), Sym: n + "+0x4"})
		}
		return out
	}
	tests := []struct {
		name   string
		kernel []Frame
		want   []string
		exact  bool
		max    int
		err    string
	}{
		{"prefix ok", fr("a", "b", "main", "libc"), []string{"a", "b", "main"}, false, 511, ""},
		{"wrong frame", fr("a", "x", "main"), []string{"a", "b", "main"}, false, 511, "frame 1 is x+0x4"},
		{"too short", fr("a", "b"), []string{"a", "b", "main"}, false, 511, "stops after 2"},
		{"truncated at max", fr("a", "b"), []string{"a", "b", "b", "main"}, false, 2, ""},
		{"exact too long", fr("a", "b", "c", "d"), []string{"a", "b", "c"}, true, 511, "must stop it at 3"},
		{"exact ok", fr("a", "b", "c"), []string{"a", "b", "c"}, true, 511, ""},
	}
	for _, tc := range tests {
		got := compareChain(tc.kernel, tc.want, tc.exact, tc.max)
		if (tc.err == "") != (got == "") || !strings.Contains(got, tc.err) {
			t.Errorf("%s: compareChain = %q, want %q", tc.name, got, tc.err)
		}
	}
}

// The host's list of cases comes from the program's table; it must hold
// every case of the default run.
func TestCasesCoverDefaultRun(t *testing.T) {
	got := strings.Join(Cases(), " ")
	for _, c := range []string{"depth_1", "depth_8", "depth_64", "depth_600", "two_tracers", "same_tracer_twice",
		"request_in_callback", "consecutive_syscalls", "timer_irq", "nmi", "cancel_pending", "ebusy",
		"exit_pending", "broken_fp_unmapped", "broken_fp_down", "kthread_einval"} {
		if !regexp.MustCompile(`\b` + c + `\b`).MatchString(got) {
			t.Errorf("case %s missing from the program's table: %s", c, got)
		}
	}
}

type fakeSeries map[string][]int

func (f fakeSeries) FinalFiles() map[string][]byte  { return nil }
func (f fakeSeries) PatchesTouching(p string) []int { return f[p] }

func TestBuildKernelErrorNamesPatches(t *testing.T) {
	s := fakeSeries{"kernel/unwind/deferred.c": {4, 5, 6}}
	tests := []struct {
		file string
		want string
	}{
		{"kernel/unwind/deferred.c", "file touched by patch 4, 5, 6"},
		{"kpatch_test/kpatch_unwind_test.c", "in kpatch's test driver"},
		{"kernel/fork.c", "not touched by the series"},
	}
	for _, tc := range tests {
		e := &BuildKernelError{
			Err:     &kbuild.BuildError{Args: []string{"make"}, Errors: []kbuild.CompileError{{File: tc.file, Line: 7, Message: "boom"}}},
			Patches: map[string][]int{tc.file: s.PatchesTouching(tc.file)},
		}
		if msg := e.Error(); !strings.Contains(msg, tc.file+":7: error: boom") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q lacks %q", tc.file, msg, tc.want)
		}
	}
}

func TestLockSerializesRuns(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	var log bytes.Buffer
	go func() {
		u, err := Lock(context.Background(), dir, &log)
		if err == nil {
			u()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("second Lock did not wait for the first")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("second Lock still waiting after unlock")
	}
	if !strings.Contains(log.String(), "waiting for another kpatch run") {
		t.Errorf("no waiting message: %q", log.String())
	}
}

// walkerV12 is the walker's model of the kernel the recorded consoles come
// from: v12 with all its patches.
func walkerV12(t *testing.T) unwind.Config {
	t.Helper()
	c, err := unwind.X86_64(12, 14)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// refusedFails are the ia32 cases that request deferred traces, each
// failing for a revision that refuses compat tasks.
func refusedFails() map[string]string {
	m := map[string]string{}
	for _, c := range []string{"depth_1", "depth_8", "depth_64", "depth_600", "two_tracers", "same_tracer_twice",
		"request_in_callback", "consecutive_syscalls", "timer_irq", "nmi", "cancel_pending", "exit_pending",
		"broken_fp_unmapped", "broken_fp_down"} {
		m["unwind_ia32/"+c] = "which the revision refuses"
	}
	return m
}

// unwindsCompat is e for a revision whose compat tasks get deferred traces.
func unwindsCompat(e Expectations) Expectations {
	e.CompatRefused, e.CompatUnwind = false, true
	return e
}

// refusedWhereUnwound are the ia32 cases of the x86 series' log that pass
// by refusal, each failing for a revision that unwinds compat tasks.
func refusedWhereUnwound() map[string]string {
	m := map[string]string{}
	for k := range refusedFails() {
		m[k] = "passed without a trace: the revision unwinds compat tasks"
	}
	// The x86 series' walker has no compat frame: its walk of the
	// compat task's direct unwinds is not one in 32-bit mode.
	m["unwind_ia32/faultable_sync"] = "the walker walked the compat task as fp, not with 4-byte frames"
	return m
}

// expectationsX86 are the expectations of the x86 series stacked on v16.
func expectationsX86() Expectations {
	sp, err := series.LoadSpec("")
	if err != nil {
		panic(err)
	}
	r, err := sp.Stack("x86", 0)
	if err != nil {
		panic(err)
	}
	e, err := ExpectationsOf(r)
	if err != nil {
		panic(err)
	}
	return e
}

// walkerX86 is the walker of v16 with the x86 series, after its last patch.
func walkerX86(t *testing.T) unwind.Config {
	t.Helper()
	sp, err := series.LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	r, err := sp.Stack("x86", 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := unwind.X86_64At(r, len(r.Patches))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReportSummaryNamesTheSeries: the last line says what was booted
// (spec.Revision.Name), and a report without a name keeps the verdict alone.
func TestReportSummaryNamesTheSeries(t *testing.T) {
	for _, tc := range []struct {
		series, want string
	}{
		{"x86 v2 on v15 (posted on v16)", "\nPASS: x86 v2 on v15 (posted on v16): 1 passed, 0 failed, 0 skipped;"},
		{"", "\nPASS: 1 passed, 0 failed, 0 skipped;"},
	} {
		var b bytes.Buffer
		(&Report{Series: tc.series, Passed: true, Cases: []CaseResult{{Mode: "unwind_x86_64", Name: "depth_1", Status: Pass}}}).WriteText(&b)
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("summary of %q:\n%s\nwant %q", tc.series, b.String(), tc.want)
		}
	}
}
