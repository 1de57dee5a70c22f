package verify

import (
	"bytes"
	"strings"
	"testing"
)

// TestReportText: a heading per patch with its counts (clean patches say
// ok), one line per finding, a rule's repeats of one message in one file
// folded into one line with their lines, and the summary.
func TestReportText(t *testing.T) {
	s := &Series{Source: "test", Patches: []*Patch{{Number: 1, Subject: "one"}, {Number: 2, Subject: "two"}}}
	f := func(patch int, id string, sev Severity, file string, line int, msg string) Finding {
		return Finding{ID: id, Severity: sev, Patch: patch, File: file, Line: line, Message: msg, Why: "w", Source: "verify"}
	}
	fs := Sorted([]Finding{
		f(2, "LONG_LINE", Warning, "a.c", 30, "line over 100 columns"),
		f(2, "LONG_LINE", Warning, "a.c", 10, "line over 100 columns"),
		f(2, "LONG_LINE", Warning, "b.c", 5, "line over 100 columns"),
		f(2, "UNUSED_STATIC", Error, "a.c", 7, "static f() is not used"),
	})
	var b bytes.Buffer
	if err := NewReport(s, fs).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	rep := NewReport(s, fs)
	if len(rep.Notes) != 2 || !strings.Contains(rep.Notes[0], "prelude") || !strings.HasPrefix(rep.Notes[1], "spelling: ") {
		t.Errorf("notes: %q", rep.Notes)
	}
	rep.Notes = nil
	b.Reset()
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `patch 1/2 one: ok
patch 2/2 two: 1 error, 3 warnings
  error   UNUSED_STATIC: a.c:7: static f() is not used
  warning LONG_LINE: a.c:10,30: line over 100 columns (2 times)
  warning LONG_LINE: b.c:5: line over 100 columns
why each rule exists: kpatch verify --rules
test: 2 patches, 1 errors, 3 warnings (LONG_LINE 3, UNUSED_STATIC 1)
`
	if b.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", b.String(), want)
	}
	if strings.Contains(b.String(), "why: ") {
		t.Error("the reasons are in --rules, not on every report")
	}
}
