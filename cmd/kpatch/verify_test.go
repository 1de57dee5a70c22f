package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/oracle"
)

func TestVerifyCommand(t *testing.T) {
	tree := debianTree(t)
	var out, errb bytes.Buffer
	code := run([]string{"verify", "--tree", tree, "--base", "v6.12", "-v", "11"}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d on v11 (it has errors); stderr %q", code, errb.String())
	}
	text := out.String()
	if !strings.Contains(text, "\npatch 05/14 unwind_user/deferred: Add unwind cache: ") || !strings.Contains(text, "CO_DEVELOPED_BY") {
		t.Errorf("text report lacks the patch heading or a finding:\n%s", text)
	}
	last := text[strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")+1:]
	if !strings.HasPrefix(last, "v11 generated on v6.12: 14 patches, ") {
		t.Errorf("summary line %q", last)
	}

	out.Reset()
	code = run([]string{"verify", "--tree", tree, "--base", "v6.12", "-v", "11", "--json"}, &out, &errb)
	var rep struct {
		Errors   int
		Findings []struct {
			ID, Severity, Message, Why string
			Patch                      int
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || code != 1 || rep.Errors == 0 {
		t.Fatalf("--json: exit %d, %v, %d errors", code, err, rep.Errors)
	}
	errIDs := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Why == "" || f.Message == "" {
			t.Errorf("finding %s without message or why", f.ID)
		}
		if f.Severity == "error" {
			errIDs[f.ID] = true
		}
	}
	var ids []string
	for id := range errIDs {
		ids = append(ids, id)
	}
	// Ignoring every ID that has errors leaves none: exit 0.
	out.Reset()
	code = run([]string{"verify", "--tree", tree, "--base", "v6.12", "-v", "11", "--ignore", strings.ToLower(strings.Join(ids, ","))}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), " 0 errors") {
		t.Errorf("--ignore %v: exit %d:\n%s", ids, code, out.String())
	}

	// --checkpatch without a tree to take checkpatch.pl from: one line.
	errb.Reset()
	seedPath, err := oracle.SeedPath()
	if err != nil {
		t.Fatal(err)
	}
	code = run([]string{"verify", "--checkpatch", seedPath}, &out, &errb)
	if code != 2 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "--tree") {
		t.Errorf("--checkpatch without --tree: exit %d, %q", code, errb.String())
	}

	// Bad input: one line naming the cause, exit 2.
	errb.Reset()
	code = run([]string{"verify", filepath.Join(t.TempDir(), "nothing.mbox")}, &out, &errb)
	msg := errb.String()
	if code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "nothing.mbox") {
		t.Errorf("missing file: exit %d, %q", code, msg)
	}
}

// TestVerifyUsage: --rules lists the rules (exit 0); an unknown --ignore ID
// is refused by name before anything is read (exit 2); --help prints the
// usage once (exit 0).
func TestVerifyUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"verify", "--rules"}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "X86_PREFIX") || !strings.Contains(out.String(), " series ") || !strings.Contains(out.String(), "UNUSED_STATIC") {
		t.Errorf("--rules: exit %d:\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	seedPath, err := oracle.SeedPath()
	if err != nil {
		t.Fatal(err)
	}
	code := run([]string{"verify", "--ignore", "SPELLING,NO_SUCH_RULE", seedPath}, &out, &errb)
	if code != 2 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "NO_SUCH_RULE") || out.Len() != 0 {
		t.Errorf("unknown --ignore: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	// ... before anything is read: a missing FILE is not what it reports
	errb.Reset()
	code = run([]string{"verify", "--ignore", "NO_SUCH_RULE", filepath.Join(t.TempDir(), "missing.mbox")}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "NO_SUCH_RULE") || strings.Contains(errb.String(), "missing.mbox") {
		t.Errorf("unknown --ignore with a missing FILE: exit %d, %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code = run([]string{"verify", "--json", filepath.Join(t.TempDir(), "nothing.mbox")}, &out, &errb)
	var refusal struct{ Error string }
	if err := json.Unmarshal(out.Bytes(), &refusal); code != 2 || err != nil || !strings.Contains(refusal.Error, "nothing.mbox") {
		t.Errorf("--json refusal: exit %d, stdout %q (%v)", code, out.String(), err)
	}
	out.Reset()
	errb.Reset()
	code = run([]string{"verify", "--help"}, &out, &errb)
	if code != 0 || strings.Count(out.String()+errb.String(), "usage: kpatch verify") != 1 {
		t.Errorf("--help: exit %d, usage printed %d times:\n%s%s", code, strings.Count(out.String()+errb.String(), "usage: kpatch verify"), out.String(), errb.String())
	}
}
