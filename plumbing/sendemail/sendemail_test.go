package sendemail_test

import (
	"context"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kpatch/internal/smtpsink"
	"kpatch/internal/testenv"
	"kpatch/plumbing/sendemail"
)

// isolated is an environment in which git reads no configuration of the
// user's or the system's.
func isolated(t *testing.T) []string {
	home := t.TempDir()
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1")
}

// TestSendToSink sends the two files of testdata with the real git
// send-email to a sink on 127.0.0.1: each message arrives once, with the
// Message-Id and threading of its file, to the recipients its To: and
// Cc: headers and --to/--cc name, and to those its body names (the
// author, the Reported-by, Cc and Signed-off-by trailers) unless their
// class is suppressed; what Send reads from git's log is what the sink
// received. Under --dry-run nothing arrives and the log is read the same.
func TestSendToSink(t *testing.T) {
	if !sendemail.Installed() {
		testenv.Missing(t, "git send-email", "apt-get install git-email libmailtools-perl")
	}
	files := []string{filepath.Join("testdata", "0000-cover-letter.patch"), filepath.Join("testdata", "0001-topic-do-it.patch")}
	headers := []string{"list@vger.example.org", "extra@example.org", "max@example.org", "watch@example.org"}
	body := []string{"bob@example.org", "rita@example.org", "bodycc@example.org", "ann@example.org"}
	for _, tc := range []struct {
		name     string
		dry      bool
		suppress []string
		cover    []string // the cover letter's recipients
		patch    []string // the patch's
	}{
		// The cover letter's From: is the sender: git Cc's it (author,
		// unless self or author is suppressed); its own Signed-off-by is
		// self, which only self suppresses.
		{"send", false, nil, append(slices.Clone(headers), "ann@example.org"), append(slices.Clone(headers), body...)},
		{"dry-run", true, nil, append(slices.Clone(headers), "ann@example.org"), append(slices.Clone(headers), body...)},
		{"suppress author and sob", false, []string{"author", "sob"}, headers, append(slices.Clone(headers), "rita@example.org", "bodycc@example.org", "ann@example.org")},
		{"suppress body", false, []string{"body"}, append(slices.Clone(headers), "ann@example.org"), append(slices.Clone(headers), "bob@example.org", "ann@example.org")},
		{"suppress self", false, []string{"self"}, headers, append(slices.Clone(headers), "bob@example.org", "rita@example.org", "bodycc@example.org")},
		{"suppress all", false, []string{"all"}, []string{"list@vger.example.org", "extra@example.org", "watch@example.org"}, []string{"list@vger.example.org", "extra@example.org", "watch@example.org"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := smtpsink.Start(t)
			o := sendemail.Options{From: "Ann Sender <ann@example.org>", To: []string{"extra@example.org"}, Cc: []string{"Watcher <watch@example.org>"},
				DryRun: tc.dry, SuppressCc: tc.suppress, SMTPServer: sink.Host, SMTPServerPort: sink.Port, Env: isolated(t), Dir: t.TempDir()}
			sent, err := sendemail.Send(context.Background(), files, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(sent) != 2 || sent[0].MessageID != "20251204-topic-v2-0@example.org" || sent[1].MessageID != "20251204-topic-v2-1@example.org" {
				t.Fatalf("sent %+v", sent)
			}
			if sent[1].Subject != "[PATCH v2 1/1] topic: do it with a subject long enough that git send-email folds it" {
				t.Errorf("subject %q", sent[1].Subject)
			}
			if d := sent[1].Date.Sub(sent[0].Date); d.Seconds() != 1 {
				t.Errorf("dates %v and %v: git send-email dates each next message a second later", sent[0].Date, sent[1].Date)
			}
			for i, want := range [][]string{tc.cover, tc.patch} {
				got := slices.Sorted(slices.Values(sent[i].Recipients))
				if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
					t.Errorf("message %d: recipients %q, want %q", i, sent[i].Recipients, want)
				}
			}
			got := sink.Messages()
			if tc.dry {
				if len(got) != 0 {
					t.Errorf("--dry-run sent %d messages", len(got))
				}
				return
			}
			if len(got) != 2 {
				t.Fatalf("the sink received %d messages", len(got))
			}
			for i, m := range got {
				msg, err := mail.ReadMessage(strings.NewReader(m.Data))
				if err != nil {
					t.Fatal(err)
				}
				if id := strings.Trim(msg.Header.Get("Message-Id"), "<>"); id != sent[i].MessageID {
					t.Errorf("message %d arrived as %q, logged as %q", i, id, sent[i].MessageID)
				}
				if d, _ := msg.Header.Date(); !d.Equal(sent[i].Date) {
					t.Errorf("message %d dated %v, logged %v", i, d, sent[i].Date)
				}
				if !slices.Equal(m.To, sent[i].Recipients) || m.From != "ann@example.org" {
					t.Errorf("message %d: envelope %s -> %q, logged %q", i, m.From, m.To, sent[i].Recipients)
				}
			}
			msg, _ := mail.ReadMessage(strings.NewReader(got[1].Data))
			if msg.Header.Get("In-Reply-To") != "<20251204-topic-v2-0@example.org>" {
				t.Errorf("patch In-Reply-To %q", msg.Header.Get("In-Reply-To"))
			}
			// git send-email keeps the author in the body when the sender is
			// another person, as it does for a maintainer's series.
			if !strings.Contains(got[1].Data, "\n\nFrom: Bob Author <bob@example.org>\n\nDo it.\n") {
				t.Errorf("patch body:\n%s", got[1].Data)
			}
		})
	}
}

// TestSendFails: a server that is not there (port 1 of the loopback
// interface) fails the send with git
// send-email's own words, and nothing is reported as sent.
func TestSendFails(t *testing.T) {
	if !sendemail.Installed() {
		testenv.Missing(t, "git send-email", "apt-get install git-email libmailtools-perl")
	}
	files := []string{filepath.Join("testdata", "0000-cover-letter.patch")}
	o := sendemail.Options{From: "Ann Sender <ann@example.org>", SMTPServer: "127.0.0.1", SMTPServerPort: "1", Env: isolated(t), Dir: t.TempDir()}
	sent, err := sendemail.Send(context.Background(), files, o)
	if err == nil || len(sent) != 0 || !strings.Contains(err.Error(), "git send-email failed after 0 of 1 messages") {
		t.Errorf("sent %v, error %v", sent, err)
	}
}
