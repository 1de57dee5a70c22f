package boottest

import (
	"errors"
	"strings"
	"testing"
)

func TestSelectCases(t *testing.T) {
	tests := []struct {
		globs []string
		want  string // the cases, or "error: ..." (a substring)
	}{
		{nil, strings.Join(Cases(), " ")},
		{[]string{"depth_*"}, "depth_1 depth_8 depth_64 depth_600"},
		{[]string{"nmi*", "func_start"}, "nmi nmi_current func_start"},
		{[]string{"ia32.broken_*"}, "broken_fp_unmapped broken_fp_down"},
		{[]string{"*.ebusy"}, "ebusy"},
		{[]string{"x86_64.depth_[18]"}, "depth_1 depth_8"},
		{[]string{"depth_2"}, `error: "depth_2" selects none of the cases: depth_1 depth_8`},
		{[]string{"arm64.*"}, `error: "arm64.*" selects none`},
		{[]string{"depth_["}, `error: "depth_[" is not a glob`},
	}
	for _, tc := range tests {
		got, err := SelectCases(tc.globs)
		switch {
		case strings.HasPrefix(tc.want, "error: "):
			if !errors.Is(err, ErrBadFilter) || !strings.Contains(err.Error(), strings.TrimPrefix(tc.want, "error: ")) {
				t.Errorf("SelectCases(%q) = %q, %v; want an error with %q", tc.globs, got, err, tc.want)
			}
		case err != nil || strings.Join(got, " ") != tc.want:
			t.Errorf("SelectCases(%q) = %q, %v; want %q", tc.globs, got, err, tc.want)
		}
	}
}

func TestCmdline(t *testing.T) {
	tests := []struct {
		g         Guest
		want, not []string
	}{
		{Guest{}, []string{"console=ttyS0 panic=-1 oops=panic loglevel=7"}, []string{"KPATCH_", "kpatch.series", "nokaslr"}},
		{Guest{Extra: []string{"faultable_sync", "func_start"}, Series: "x86_v2_on_v16"},
			[]string{" kpatch.series=x86_v2_on_v16 ", " KPATCH_EXTRA=faultable_sync,func_start"}, []string{"KPATCH_FILTER", "nokaslr"}},
		{Guest{Extra: []string{"faultable_sync"}, AllExtra: true, Filter: []string{"depth_*", "ia32.nmi"}, NoKASLR: true},
			[]string{" KPATCH_EXTRA=1 ", " KPATCH_FILTER=depth_*,ia32.nmi ", " nokaslr"}, nil},
	}
	for _, tc := range tests {
		c := Cmdline(tc.g)
		for _, w := range tc.want {
			if !strings.Contains(c+" ", w) {
				t.Errorf("Cmdline(%+v) = %q lacks %q", tc.g, c, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(c, w) {
				t.Errorf("Cmdline(%+v) = %q has %q", tc.g, c, w)
			}
		}
	}
}

func TestExecStatus(t *testing.T) {
	for console, want := range map[string]int{
		"[ 1.0] Linux\nkpatch-exec: begin\nhello\nkpatch-exec: exit 0\nkpatch-selftest: done\n": 0,
		"kpatch-exec: begin\r\nkpatch-exec: exit 3\r\n":                                         3,
		"kpatch-exec: begin\nKernel panic\n":                                                    -1,
	} {
		if got := execStatus([]byte(console)); got != want {
			t.Errorf("execStatus(%q) = %d, want %d", console, got, want)
		}
	}
}

// The cases a filter did not select are left out of the report, in a
// boot's and in a saved console's.
func TestReportLeavesOutUnselected(t *testing.T) {
	an := &Analysis{Cases: []CaseResult{
		{Mode: "unwind_x86_64", Name: "depth_1", Status: Pass, Traces: 1},
		{Mode: "unwind_x86_64", Name: "depth_8", Status: Skip, Reason: NotSelected},
		{Mode: "unwind_ia32", Name: "depth_8", Status: Skip, Reason: "the revision does not unwind compat tasks"},
	}}
	var r Report
	r.fill(an)
	if len(r.Cases) != 2 || r.Cases[0].Name != "depth_1" || r.Cases[1].Mode != "unwind_ia32" || !r.Passed {
		t.Errorf("report cases %+v", r.Cases)
	}
}
