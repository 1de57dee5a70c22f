package mail_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/oracle"
	"kpatch/plumbing/mail"
)

// TestMbox writes the seed's messages as an mbox the way b4 mbox and lore
// do (From separators, >From quoting, folded subjects, a quoted-printable
// body, an RFC 2047 sender name, a duplicate, patches out of order) and
// checks that it parses into the same thread, plain and gzip-compressed,
// down to the files the oracle rebuilds.
func TestMbox(t *testing.T) {
	want, err := oracle.ParseSeed()
	if err != nil {
		t.Fatal(err)
	}
	type msg struct {
		m      *mail.ThreadMessage
		number int
	}
	all := []msg{{want.Cover, 0}}
	for _, p := range want.Patches {
		all = append(all, msg{&p.ThreadMessage, p.Number})
	}
	for _, r := range want.Replies {
		all = append(all, msg{r, -1})
	}
	// Mail order differs from thread order: patch 2 before patch 1, and
	// patch 3 twice (cross-posted).
	all[1], all[2] = all[2], all[1]
	all = append(all[:4], append([]msg{all[3]}, all[4:]...)...)
	var b bytes.Buffer
	for i, x := range all {
		m := x.m
		fmt.Fprintf(&b, "From mboxrd@z Thu Jan  1 00:00:00 1970\n")
		sender := m.Sender
		if i%2 == 1 {
			sender = mime.QEncoding.Encode("utf-8", sender)
		}
		fmt.Fprintf(&b, "From: %s <someone@example.org>\n", sender)
		fmt.Fprintf(&b, "Message-Id: <%d@example.org>\n", x.number*1000+i-map[bool]int{true: 1}[x.number == 3 && i == 4])
		subject := m.Subject
		if len(subject) > 60 {
			k := strings.LastIndex(subject[:60], " ")
			subject = subject[:k] + "\n" + subject[k:] // folded
		}
		fmt.Fprintf(&b, "Subject: %s\n", subject)
		body := m.Body
		if x.number < 0 && i%3 == 0 {
			var qp bytes.Buffer
			w := quotedprintable.NewWriter(&qp)
			w.Write([]byte(body))
			w.Close()
			fmt.Fprintf(&b, "Content-Transfer-Encoding: quoted-printable\n\n%s\n", qp.String())
			continue
		}
		body = strings.ReplaceAll("\n"+body, "\nFrom ", "\n>From ")[1:]
		fmt.Fprintf(&b, "\n%s\n", body)
	}
	mbox := b.Bytes()
	if !bytes.Contains(mbox, []byte("\n>From ")) {
		t.Log("no body line needed >From quoting")
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(mbox)
	zw.Close()
	for name, data := range map[string][]byte{"mbox": mbox, "t.mbox.gz": gz.Bytes()} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), oracle.SeedName)
			os.WriteFile(p, data, 0o644)
			t.Setenv("KPATCH_SEED", p)
			got, err := oracle.ParseSeed()
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != want.Version || got.Total != want.Total || len(got.Patches) != len(want.Patches) || len(got.Replies) != len(want.Replies) || got.Cover == nil {
				t.Fatalf("v%d, %d patches, %d replies; want v%d, %d, %d", got.Version, len(got.Patches), len(got.Replies), want.Version, len(want.Patches), len(want.Replies))
			}
			trim := func(s string) string { return strings.TrimRight(s, "\n") }
			if trim(got.Cover.Body) != trim(want.Cover.Body) {
				t.Error("the cover letter's body differs")
			}
			for i, p := range got.Patches {
				w := want.Patches[i]
				if p.Title != w.Title || p.Author != w.Author || p.Sender != w.Sender || p.Log != w.Log || p.Changelog != w.Changelog || p.Diffstat != w.Diffstat || len(p.Files) != len(w.Files) {
					t.Errorf("patch %d differs: %q by %q (%q)", p.Number, p.Title, p.Author, p.Sender)
				}
			}
			for i, r := range got.Replies {
				w := want.Replies[i]
				if r.Subject != w.Subject || r.Sender != w.Sender || trim(r.Body) != trim(w.Body) {
					t.Errorf("reply %d differs: %q by %q", i, r.Subject, r.Sender)
				}
			}
			gotFiles, err := oracle.CreatedFiles(got)
			if err != nil {
				t.Fatal(err)
			}
			wantFiles, _ := oracle.CreatedFiles(want)
			if len(gotFiles) != len(wantFiles) || len(gotFiles) == 0 {
				t.Errorf("rebuilt %d created files, want %d", len(gotFiles), len(wantFiles))
			}
		})
	}
}

// TestMboxText checks the parts of the mbox reading the seed does not
// exercise: >From unquoting, base64 and multipart bodies, an address
// without a name.
func TestMboxText(t *testing.T) {
	tests := []struct {
		name, mbox, want string
	}{
		{"quoted From line",
			"From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: A <a@example.org>\nSubject: Re: [PATCH v11 01/14] x\n\nwrote:\n>From here on\n>>From there\n",
			"Re: [PATCH v11 01/14] x\n\n[A]\n\nwrote:\nFrom here on\n>From there\n\n"},
		{"base64 body, no name",
			"From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: b@example.org\nSubject: Re: [PATCH v11 02/14] y\nContent-Transfer-Encoding: base64\n\naGVsbG8K\nd29ybGQK\n",
			"Re: [PATCH v11 02/14] y\n\n[b@example.org]\n\nhello\nworld\n\n"},
		{"multipart",
			"From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: C <c@example.org>\nSubject: Re: [PATCH v11 03/14] z\nContent-Type: multipart/mixed; boundary=\"XX\"\n\n--XX\nContent-Type: text/plain\n\nthe text\n--XX\nContent-Type: application/pgp-signature\n\nsig\n--XX--\n",
			"Re: [PATCH v11 03/14] z\n\n[C]\n\nthe text\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mail.ThreadText([]byte(tt.mbox))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
