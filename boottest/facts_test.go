package boottest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/templates/linux"

	"kpatch/series"
	"kpatch/spec"
)

// TestExpectationsFollowTheRevision: what the self-test expects of each
// revision comes from the spec's facts: cookies from v13, v14's return
// values and compat refusal, the USED bit's reserved bit and
// faultable_sync, and the configuration; v15 and v16 alone have no x86
// unwinder, the x86 series stacked on v16 has.
func TestExpectationsFollowTheRevision(t *testing.T) {
	sp, err := series.LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		cookie               bool
		done, reserved       int
		extra                string
		refused, compatUnwnd bool
		compatFP             string
		max                  int
		funcStart, nmiCur    bool
	}
	for _, tc := range []struct {
		name    string
		version int
		stack   string
		want    want
		err     string
	}{
		{name: "v11", version: 11, want: want{done: 2, reserved: 1, compatUnwnd: true, compatFP: "y", max: 511}},
		{name: "v12", version: 12, want: want{done: 2, reserved: 2, extra: "faultable_sync", compatUnwnd: true, compatFP: "y", max: 511}},
		{name: "v13", version: 13, want: want{cookie: true, done: 2, reserved: 2, extra: "faultable_sync", compatUnwnd: true, compatFP: "y", max: 511}},
		{name: "v14", version: 14, want: want{cookie: true, done: 1, reserved: 2, extra: "faultable_sync", refused: true, compatFP: "n", max: 510}},
		{name: "v16", version: 16, err: "nothing selects the unwinder on x86_64"},
		{name: "x86 on v16", version: 2, stack: "x86", want: want{cookie: true, done: 1, reserved: 2, extra: "faultable_sync", refused: true, compatFP: "n", max: 510}},
		{name: "x86 as 6.19 merged it on v16", version: 1, stack: "x86-6.19", want: want{cookie: true, done: 1, reserved: 2, extra: "faultable_sync,nmi_current,func_start", compatUnwnd: true, compatFP: "n", max: 510, funcStart: true, nmiCur: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *spec.Revision
			if tc.stack != "" {
				r, err = sp.Stack(tc.stack, tc.version)
			} else {
				r, err = sp.Revision(tc.version)
			}
			if err != nil {
				t.Fatal(err)
			}
			e, err := ExpectationsOf(r)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{e.Cookie, e.Done, e.ReservedBits, strings.Join(e.ExtraCases, ","), e.CompatRefused, e.CompatUnwind, e.Config["HAVE_UNWIND_USER_COMPAT_FP"], e.MaxEntries, e.FuncStart, e.NMICurrent}
			if got != tc.want || e.Pending != 1 {
				t.Errorf("got %+v (pending %d), want %+v (pending 1)", got, e.Pending, tc.want)
			}
			if e.Config["HAVE_UNWIND_USER_FP"] != "y" || e.Config["UNWIND_USER"] != "y" {
				t.Errorf("config %v: want UNWIND_USER=y HAVE_UNWIND_USER_FP=y", e.Config)
			}
			h := string(e.Header())
			b := map[bool]string{false: "0", true: "1"}
			for _, l := range []string{"#define KU_REQ_DONE\t\t" + string(rune('0'+tc.want.done)),
				"#define KU_FUNC_START\t\t" + b[tc.want.funcStart], "#define KU_NMI_CURRENT\t\t" + b[tc.want.nmiCur]} {
				if !strings.Contains(h, l) {
					t.Errorf("header lacks %q:\n%s", l, h)
				}
			}
		})
	}
}

// nmi-request: twa-nmi-current in a revision's self-test facts makes
// nmi_current expect the irq_work TWA_NMI_CURRENT raises (KU_NMI_CURRENT),
// other-tracers: N makes ebusy leave N bits to the kernel's own tracers
// (KU_OTHER_TRACERS); other values are refused.
func TestExpectationsNMIRequest(t *testing.T) {
	for _, tc := range []struct{ line, err string }{
		{"nmi-request: twa-nmi-current", ""},
		{"nmi-request: resume", `nmi-request: want twa-nmi-current, got "resume"`},
		{"other-tracers: 1", ""},
		{"other-tracers: perf", `other-tracers: want a number, got "perf"`},
	} {
		dir := filepath.Join(t.TempDir(), "spec")
		if err := linux.Export(dir); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "facts", "selftest.tmpl")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, append(b, "\n"+tc.line+"\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		sp, err := series.LoadSpec(dir)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sp.Stack("x86", 0)
		if err != nil {
			t.Fatal(err)
		}
		e, err := ExpectationsOf(r)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		h := string(e.Header())
		switch {
		case err != nil:
			t.Errorf("%s: %v", tc.line, err)
		case strings.HasPrefix(tc.line, "nmi-request") && (!e.NMICurrent || !strings.Contains(h, "#define KU_NMI_CURRENT\t\t1")):
			t.Errorf("%s: NMICurrent %v:\n%s", tc.line, e.NMICurrent, h)
		case strings.HasPrefix(tc.line, "other-tracers") && (e.OtherTracers != 1 || !strings.Contains(h, "#define KU_OTHER_TRACERS\t1")):
			t.Errorf("%s: OtherTracers %d:\n%s", tc.line, e.OtherTracers, h)
		}
	}
}
