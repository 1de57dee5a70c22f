package mail_test

import (
	"os/exec"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/mail"
)

func TestParseSubject(t *testing.T) {
	tests := []struct {
		subject string
		want    mail.Subject
	}{
		{"[PATCH v11 03/14] unwind: x", mail.Subject{Patch: true, Numbered: true, Number: 3, Total: 14, Version: 11, Prefix: "PATCH v11 03/14", Title: "unwind: x"}},
		{"[PATCH v11 00/14] cover", mail.Subject{Patch: true, Numbered: true, Number: 0, Total: 14, Version: 11, Prefix: "PATCH v11 00/14", Title: "cover"}},
		{"Re: [PATCH v11 03/14] unwind: x", mail.Subject{Patch: true, Reply: true, Numbered: true, Number: 3, Total: 14, Version: 11, Prefix: "PATCH v11 03/14", Title: "unwind: x"}},
		{"[PATCH] one  patch", mail.Subject{Patch: true, Number: 1, Total: 1, Version: 1, Prefix: "PATCH", Title: "one patch"}},
		{"[RFC PATCH net-next V2 1/2] x", mail.Subject{Patch: true, Numbered: true, Number: 1, Total: 2, Version: 2, Prefix: "RFC PATCH net-next V2 1/2", Title: "x"}},
		{"[GIT PULL] tracing", mail.Subject{Number: 1, Total: 1, Version: 1, Prefix: "GIT PULL", Title: "tracing"}},
		{"AW: hello", mail.Subject{Reply: true, Number: 1, Total: 1, Version: 1, Title: "AW: hello"}},
		{"[RFC][PATCH 3/4] foo", mail.Subject{Patch: true, Numbered: true, Number: 3, Total: 4, Version: 1, Prefix: "RFC PATCH 3/4", Title: "foo"}},
		{"[PATCH] [net] foo: bar", mail.Subject{Patch: true, Number: 1, Total: 1, Version: 1, Prefix: "PATCH net", Title: "foo: bar"}},
		{"[PATCH 1/2] Re: foo", mail.Subject{Patch: true, Numbered: true, Number: 1, Total: 2, Version: 1, Prefix: "PATCH 1/2", Title: "foo"}},
	}
	for _, tc := range tests {
		if got := mail.ParseSubject(tc.subject); got != tc.want {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.subject, got, tc.want)
		}
	}
}

// TestSubjectTitleIsGitMailinfos: the title is the subject git mailinfo
// keeps, for the prefixes kernel mail carries.
func TestSubjectTitleIsGitMailinfos(t *testing.T) {
	gittest.Require(t)
	dir := t.TempDir()
	for _, subject := range []string{
		"[PATCH v11 03/14] unwind: x", "Re: [PATCH v2 1/2] foo", "[PATCH 1/2] Re: foo", "[RFC][PATCH 3/4] foo",
		"[PATCH] [net] foo: bar", "PATCH: foo", "[PATCH]foo", "Re: Re: [PATCH] foo", "[PATCH] foo [bar]",
		"[PATCH net-next v3 2/5]   spaced   title", "RE: [RFC PATCH] x", ": [PATCH] colon first",
	} {
		cmd := exec.Command("git", "mailinfo", "/dev/null", "/dev/null")
		cmd.Dir, cmd.Env = dir, gittest.Environ(dir)
		cmd.Stdin = strings.NewReader("From: A <a@example.org>\nSubject: " + subject + "\n\nbody\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git mailinfo: %v", err)
		}
		var want string
		for _, l := range strings.Split(string(out), "\n") {
			if s, ok := strings.CutPrefix(l, "Subject: "); ok {
				want = s
			}
		}
		if got := mail.ParseSubject(subject).Title; got != strings.Join(strings.Fields(want), " ") {
			t.Errorf("%q: title %q, git mailinfo %q", subject, got, want)
		}
	}
}
