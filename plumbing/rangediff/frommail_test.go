package rangediff

import (
	"testing"

	"kpatch/plumbing/mail"
)

func TestFromMailCommit(t *testing.T) {
	for _, tc := range []struct {
		name, commit, want string
	}{
		{"abbreviated", "0123456789abcdef0123456789abcdef01234567", "0123456789ab"},
		{"short kept", "abc123", "abc123"},
		{"none: content id", "", "content"},
		{"all zeros (git format-patch --zero-commit): content id", "0000000000000000000000000000000000000000", "content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &mail.Patch{Message: mail.Message{Commit: tc.commit}, Author: "A U Thor <a@example.org>", Title: "t", Log: "body\n", Diff: "diff --git a/x b/x\n"}
			got := FromMail(&mail.Series{Patches: []*mail.Patch{p}})
			want := tc.want
			if want == "content" {
				want = p.ContentID()
			}
			if len(got) != 1 || got[0].Commit != want || got[0].Message != "t\n\nbody\n" || got[0].Diff != p.Diff || got[0].Author != p.Author {
				t.Errorf("FromMail() = %+v, want commit %q", got, want)
			}
		})
	}
}
