package mail_test

import (
	"testing"

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
		{"AW: hello", mail.Subject{Reply: true, Number: 1, Total: 1, Version: 1, Title: "hello"}},
	}
	for _, tc := range tests {
		if got := mail.ParseSubject(tc.subject); got != tc.want {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.subject, got, tc.want)
		}
	}
}
