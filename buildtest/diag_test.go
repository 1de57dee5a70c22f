package buildtest

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestOutputParser(t *testing.T) {
	data, err := os.ReadFile("testdata/make-output.txt")
	if err != nil {
		t.Fatal(err)
	}
	p := newOutputParser(func(s string) string { return strings.TrimPrefix(s, "/src/") })
	for _, l := range strings.Split(string(data), "\n") {
		p.line(l)
	}
	tests := []struct {
		obj      string
		failed   bool
		errors   []string
		warnings []string
	}{
		{"kernel/fork.o", false, nil, []string{"kernel/fork.c:120: warning: no previous prototype for 'foo' [-Wmissing-prototypes]"}},
		{"kernel/exit.o", true, []string{"include/linux/unwind_deferred.h:40: error: implicit declaration of function 'bar' [-Werror=implicit-function-declaration]"}, nil},
		{"kernel/signal.o", false, nil, []string{
			"kernel/signal.c:77: warning: sparse: symbol 'x' was not declared. Should it be static?",
			"kernel/signal.c:80: warning: sparse: error: incompatible types in comparison expression (different address spaces):",
			"kernel/signal.o: warning: objtool: do_thing+0x1f: call to foo() with UACCESS enabled"}},
	}
	for _, tc := range tests {
		r := p.results[tc.obj]
		if r == nil {
			t.Errorf("%s: no result", tc.obj)
			continue
		}
		if r.Failed != tc.failed {
			t.Errorf("%s: failed = %v, want %v", tc.obj, r.Failed, tc.failed)
		}
		if got := diagStrings(r.Errors); strings.Join(got, "\n") != strings.Join(tc.errors, "\n") {
			t.Errorf("%s: errors\n%q\nwant\n%q", tc.obj, got, tc.errors)
		}
		if got := diagStrings(r.Warnings); strings.Join(got, "\n") != strings.Join(tc.warnings, "\n") {
			t.Errorf("%s: warnings\n%q\nwant\n%q", tc.obj, got, tc.warnings)
		}
	}
	if r := p.results["kernel/exit.o"]; r != nil && len(r.Errors) == 1 {
		if len(r.Errors[0].Context) != 2 || !strings.Contains(r.Errors[0].Context[0], "bar();") {
			t.Errorf("error context = %q, want the source excerpt", r.Errors[0].Context)
		}
	}
	if _, ok := p.results["arch/x86/kernel/ptrace.o"]; ok {
		t.Errorf("ptrace.o compiled cleanly but has a result entry")
	}
	// Every object make compiled is known, warnings or not: the full
	// build at the series' end remembers each one's result.
	var compiled []string
	for o := range p.compiled {
		compiled = append(compiled, o)
	}
	slices.Sort(compiled)
	if want := []string{"arch/x86/kernel/ptrace.o", "kernel/exit.o", "kernel/fork.o", "kernel/signal.o"}; !slices.Equal(compiled, want) {
		t.Errorf("compiled %q, want %q", compiled, want)
	}
}

func diagStrings(ds []Diag) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	return out
}

func TestDiagKey(t *testing.T) {
	tests := []struct {
		a, b Diag
		same bool
	}{
		{Diag{File: "a.c", Line: 3, Col: 1, Severity: "warning", Message: "unused variable 'x'"},
			Diag{File: "a.c", Line: 9, Col: 4, Severity: "warning", Message: "unused variable 'x'"}, true},
		{Diag{File: "a.c", Line: 3, Severity: "warning", Message: "unused variable 'x'"},
			Diag{File: "b.c", Line: 3, Severity: "warning", Message: "unused variable 'x'"}, false},
		{Diag{File: "a.o", Severity: "warning", Message: "objtool: f+0x1f: call"},
			Diag{File: "a.o", Severity: "warning", Message: "objtool: f+0x2a: call"}, true},
		{Diag{File: "a.c", Severity: "warning", Message: "previous declaration at a.h:12:3"},
			Diag{File: "a.c", Severity: "warning", Message: "previous declaration at a.h:40:3"}, true},
		{Diag{File: "a.c", Severity: "warning", Message: "x"}, Diag{File: "a.c", Severity: "error", Message: "x"}, false},
	}
	for i, tc := range tests {
		if got := tc.a.Key() == tc.b.Key(); got != tc.same {
			t.Errorf("%d: %q vs %q: same = %v, want %v", i, tc.a.Key(), tc.b.Key(), got, tc.same)
		}
	}
}
