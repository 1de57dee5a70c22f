package spec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"kpatch/spec"
)

// TestMessageIDsField reads the Message-Ids header field of v2 of the
// model spec (a cover letter and two patches): a list may end early and
// name "-" for an unknown id; a malformed id, an unknown cover letter or
// more ids than messages are refused at load, naming the file.
func TestMessageIDsField(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        []string // PostedID(0..3)
		err         string
	}{
		{"all", "c@x.org, p1@x.org, p2@x.org", []string{"c@x.org", "p1@x.org", "p2@x.org", ""}, ""},
		{"cover only", "c@x.org", []string{"c@x.org", "", "", ""}, ""},
		{"unknown middle", "c@x.org, -, p2@x.org", []string{"c@x.org", "", "p2@x.org", ""}, ""},
		{"angle brackets", "<c@x.org>", nil, `"<c@x.org>" is not a Message-Id`},
		{"no domain", "c@x.org, p1", nil, `"p1" is not a Message-Id`},
		{"unknown cover", "-, p1@x.org", nil, "the cover letter's comes first"},
		{"too many", "c@x.org, p1@x.org, p2@x.org, p3@x.org", nil, "v2/series: Message-Ids names 4 messages, and v2 has 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := modelFS()
			hdr := string(fsys["v2/series"].Data)
			fsys["v2/series"] = &fstest.MapFile{Data: []byte(strings.Replace(hdr, "\n\n", "\nMessage-Ids: "+tc.value+"\n\n", 1))}
			s, err := spec.Load(fsys)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "v2/series") {
					t.Fatalf("got %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v2, _ := s.Revision(2)
			for n, want := range tc.want {
				if got := v2.PostedID(n); got != want {
					t.Errorf("PostedID(%d) = %q, want %q", n, got, want)
				}
			}
			if v1, _ := s.Revision(1); v1.Posted() || !v2.Posted() {
				t.Errorf("Posted: v1 %v, v2 %v", v1.Posted(), v2.Posted())
			}
		})
	}
}

// TestRecordPosting records v2's posting through the writer: the header
// gets its Message-Ids, Date and Base, and nothing else of the file
// changes; a malformed id is refused before anything is written.
func TestRecordPosting(t *testing.T) {
	dir := writeFS(t, modelFS())
	before, _ := os.ReadFile(filepath.Join(dir, "v2", "series"))
	w := spec.NewWriter(dir)
	if err := w.RecordPosting("v2", []string{"c@x.org", "bad"}, time.Time{}, ""); err == nil {
		t.Error("a malformed Message-Id was taken")
	}
	date := time.Date(2026, 12, 4, 20, 10, 0, 0, time.FixedZone("", -5*3600))
	w = spec.NewWriter(dir)
	if err := w.RecordPosting("v2", []string{"c@x.org", "p1@x.org", "p2@x.org"}, date, "v6.18"); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "v2", "series"))
	want := strings.Replace(string(before), "Date: Mon, 30 Jun 2025 20:53:21 -0400\n", "Date: Fri, 04 Dec 2026 20:10:00 -0500\nMessage-Ids: c@x.org, p1@x.org, p2@x.org\nBase: v6.18\n", 1)
	if string(after) != want {
		t.Errorf("v2/series:\n%s\nwant:\n%s", after, want)
	}
	s, err := spec.Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := s.Revision(2)
	if v2.PostedID(2) != "p2@x.org" || !v2.Date.Equal(date) || v2.Base != "v6.18" {
		t.Errorf("loaded: %q %v %q", v2.MessageIDs, v2.Date, v2.Base)
	}
	w = spec.NewWriter(dir)
	if err := w.ClearPosting("v2"); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	cleared, _ := os.ReadFile(filepath.Join(dir, "v2", "series"))
	if want := strings.Replace(want, "Message-Ids: c@x.org, p1@x.org, p2@x.org\n", "", 1); string(cleared) != want {
		t.Errorf("cleared v2/series:\n%s\nwant:\n%s", cleared, want)
	}
}
