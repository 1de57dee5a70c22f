package trailers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/plumbing/mail"
	"kpatch/plumbing/patchid"
	"kpatch/revision/trailers"
	"kpatch/series"
	"kpatch/templates/linux"
)

func TestCollect(t *testing.T) {
	msgs, err := mail.LoadMessages("testdata/replies.mbox")
	if err != nil {
		t.Fatal(err)
	}
	got := trailers.Collect(msgs)
	var lines []string
	for _, g := range got {
		lines = append(lines, g.Reply+" -> "+string(rune('0'+g.Target/10))+string(rune('0'+g.Target%10))+" "+g.Line)
	}
	want := []string{
		"r1@example.org -> 03 Reviewed-by: Jane Doe <jane@example.org>",
		"r4@example.org -> 03 Reviewed-by: Deep Reply <deep@example.org>",
		"r2@example.org -> 00 Acked-by: Ingo Molnar <mingo@kernel.org>",
		"r3@example.org -> 06 Tested-by: Tess Ter <tess@example.org>",
		"r5@example.org -> 13 Reviewed-by: Someone <someone@example.org>",
		"r7@example.org -> 03 Reported-by: Rita Porter <rita@example.org>",
		"r7@example.org -> 03 Closes: https://lore.kernel.org/all/bug@example.org/",
		"r8@example.org -> 06 Suggested-by: Sue Gest <sue@example.org>",
		"r8@example.org -> 06 Link: https://lore.kernel.org/all/idea@example.org/",
		"r8@example.org -> 06 Link: see the thread",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// Provenance: each trailer carries its reply's sender and date.
	for _, g := range got {
		if g.Reply == "r7@example.org" && (g.Who != "Rita Porter <rita@example.org>" || g.When != "Fri, 27 Jun 2025 09:00:00 +0000") {
			t.Errorf("%s: from %q on %q", g.Line, g.Who, g.When)
		}
		if (g.Line == "Link: see the thread") == (g.Invalid == "") {
			t.Errorf("%s: invalid %q", g.Line, g.Invalid)
		}
	}
	for _, g := range got {
		if (g.Target == 3) != (g.PatchID != "") {
			t.Errorf("%s: patch-id %q: only the replies whose patch is in the file have one", g.Reply, g.PatchID)
		}
	}
}

// TestApplyToSpecCopy adds the trailers to v12 of a spec copy: the compat
// patch by patch-id (its posted title differs), patch 6 by subject, the
// cover letter's ack on all 14, the dropped patch 13's review nowhere; a
// second run adds nothing.
func TestApplyToSpecCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spec")
	if err := linux.Export(dir); err != nil {
		t.Fatal(err)
	}
	msgs, err := mail.LoadMessages("testdata/replies.mbox")
	if err != nil {
		t.Fatal(err)
	}
	given := trailers.Collect(msgs)
	sp, err := series.LoadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := sp.Revision(12)
	// Patch-ids as generation would give them: the posted patch 3's diff
	// stands for v12's patch 3.
	posted := msgs[1].Body[strings.Index(msgs[1].Body, "diff --git"):]
	ids := map[int]string{3: patchid.Stable(posted), 6: patchid.Stable("diff --git a/y b/y\n")}
	added, unmatched := trailers.Plan(rev, given, ids)
	count := map[string]int{}
	for _, a := range added {
		count[a.ID+" "+a.By]++
	}
	if count["compat-fp patch-id"] != 4 || count["deferred subject"] != 3 || count["x86-fp cover letter"] != 1 || len(added) != 14+3+4 {
		t.Errorf("planned %d: %v", len(added), count)
	}
	if len(unmatched) != 1 || unmatched[0].Target != 13 {
		t.Errorf("unmatched: %+v", unmatched)
	}
	if err := trailers.Write(dir, added); err != nil {
		t.Fatal(err)
	}
	sp, err = series.LoadSpec(dir)
	if err != nil {
		t.Fatalf("the edited copy does not load: %v", err)
	}
	rev, _ = sp.Revision(12)
	p3 := rev.Patches[2]
	if !strings.HasSuffix(p3.Log, "Signed-off-by: Steven Rostedt (Google) <rostedt@goodmis.org>\nReviewed-by: Jane Doe <jane@example.org>\nReviewed-by: Deep Reply <deep@example.org>\nAcked-by: Ingo Molnar <mingo@kernel.org>\nReported-by: Rita Porter <rita@example.org>\nCloses: https://lore.kernel.org/all/bug@example.org/\n") {
		t.Errorf("patch 3's message ends:\n%s", p3.Log)
	}
	p14 := rev.Patches[13]
	if len(p14.Edits) == 0 || !strings.Contains(p14.Changelog, "Changes since v11") || !strings.HasSuffix(p14.Log, "Acked-by: Ingo Molnar <mingo@kernel.org>\n") {
		t.Errorf("patch 14 lost its notes or edits, or has no ack: %q", p14.Log)
	}
	v11, _ := sp.Revision(11)
	if strings.Contains(v11.Patches[2].Log, "Reviewed-by") {
		t.Error("v11 was changed")
	}
	again, _ := trailers.Plan(rev, given, ids)
	if len(again) != 0 {
		t.Errorf("a second run adds %d trailers", len(again))
	}
	for _, v := range []string{"v11", "v12"} {
		ents, _ := os.ReadDir(filepath.Join(dir, v))
		for _, e := range ents {
			if strings.Contains(e.Name(), "tmp") {
				t.Errorf("%s holds %s (a temporary file left)", v, e.Name())
			}
		}
	}
}

// TestMalformedPersonTrailers: a person trailer must name one person with
// one mail address; the others are kept out of the plan, each with why.
func TestMalformedPersonTrailers(t *testing.T) {
	msgs, err := mail.LoadMessages("testdata/malformed.mbox")
	if err != nil {
		t.Fatal(err)
	}
	given := trailers.Collect(msgs)
	why := map[string]string{}
	for _, g := range given {
		why[g.Line] = g.Invalid
	}
	for line, want := range map[string]string{
		"Reviewed-by: No Address": "no mail address",
		"Acked-by: Ann One <ann@example.org>, Bob Two <bob@example.org>":   "more than one address",
		"Tested-by: <not-an-email>":                                        "no mail address",
		"Reviewed-by: Ann One <ann@example.org> Bob Two <bob@example.org>": "more than one address",
		"Reviewed-by: Good Person <good@example.org>":                      "",
		"Tested-by: bare@example.org":                                      "",
	} {
		got, ok := why[line]
		if !ok || (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%q: invalid %q (found %v), want %q", line, got, ok, want)
		}
	}
	dir := filepath.Join(t.TempDir(), "spec")
	if err := linux.Export(dir); err != nil {
		t.Fatal(err)
	}
	sp, err := series.LoadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := sp.Revision(12)
	added, unmatched := trailers.Plan(rev, given, nil)
	var lines []string
	for _, a := range added {
		lines = append(lines, a.Trailer)
	}
	if strings.Join(lines, "\n") != "Reviewed-by: Good Person <good@example.org>\nTested-by: bare@example.org" || len(unmatched) != 0 {
		t.Errorf("planned %q, unmatched %v", lines, unmatched)
	}
}
