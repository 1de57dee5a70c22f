package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/plumbing/sendemail"
)

// bare is the user@host of an address, lower case.
func bare(a string) string {
	if i := strings.LastIndexByte(a, '<'); i >= 0 {
		a = strings.TrimSuffix(a[i+1:], ">")
	}
	return strings.ToLower(strings.TrimSpace(a))
}

// TestWhoIsWhatGitSends: for each message of v16 and of the x86 series,
// the recipients kpatch gen --who names (the headers, and git send-email's
// own Cc at send) are the envelope recipients the real git send-email
// --dry-run gives the same mail through kpatch send, with the same
// --to, --cc, --cc-cmd, --no-auto-cc and --suppress-cc classes.
func TestWhoIsWhatGitSends(t *testing.T) {
	if !sendemail.Installed() {
		testenv.Missing(t, "git send-email", "apt-get install git-email libmailtools-perl")
	}
	tree := testenv.KernelTree(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ccCmd := `printf "%s\n" "Cmd Person <cmd@example.org>"; true`
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"git's defaults", nil},
		{"--suppress-cc body", []string{"--suppress-cc", "body"}},
		{"--suppress-cc author,self", []string{"--suppress-cc", "author,self"}},
		{"--no-auto-cc, --to, --cc-cmd", []string{"--no-auto-cc", "--to", "extra@example.org", "--cc-cmd", ccCmd}},
		{"x86", []string{"--stack", "x86", "--suppress-cc", "misc-by"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := []string{"--tree", tree, "--base", "v6.12", "--json"}
			var stdout, stderr bytes.Buffer
			if code := run(append(append([]string{"gen", "--who"}, base...), tc.args...), &stdout, &stderr); code != 0 {
				t.Fatalf("gen --who: %s", stderr.String())
			}
			var who struct {
				Messages []struct {
					File       string
					Recipients []struct {
						Address, Header string
						Why             []string
					}
				}
			}
			if err := json.Unmarshal(stdout.Bytes(), &who); err != nil {
				t.Fatal(err)
			}
			stdout.Reset()
			stderr.Reset()
			if code := run(append(append([]string{"send", "--dry-run"}, base...), tc.args...), &stdout, &stderr); code != 0 {
				t.Fatalf("send --dry-run: %s", stderr.String())
			}
			var sent struct {
				Messages []struct {
					File       string
					Recipients []string
				}
			}
			if err := json.Unmarshal(stdout.Bytes(), &sent); err != nil {
				t.Fatal(err)
			}
			if len(sent.Messages) != len(who.Messages) || len(who.Messages) < 3 {
				t.Fatalf("%d messages sent, %d in --who", len(sent.Messages), len(who.Messages))
			}
			for i, m := range who.Messages {
				var got []string
				for _, r := range m.Recipients {
					if len(r.Why) == 0 {
						t.Errorf("%s: %s has no reason", m.File, r.Address)
					}
					if !slices.Contains(got, bare(r.Address)) {
						got = append(got, bare(r.Address))
					}
				}
				var want []string
				for _, a := range sent.Messages[i].Recipients {
					if !slices.Contains(want, bare(a)) {
						want = append(want, bare(a))
					}
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s:\n--who:         %q\ngit send-email: %q", m.File, got, want)
				}
				if i == 1 && tc.name == "--no-auto-cc, --to, --cc-cmd" && !slices.Contains(got, "cmd@example.org") {
					t.Errorf("%s: the --cc-cmd's address is not a recipient: %q", m.File, got)
				}
			}
		})
	}
}
