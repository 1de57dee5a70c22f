package mail_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/oracle"
	"kpatch/plumbing/mail"
)

func TestLoadMbox(t *testing.T) {
	s, err := mail.Load("testdata/two.mbox")
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 3 || s.Cover == nil || len(s.Patches) != 2 || len(s.Replies) != 1 {
		t.Fatalf("v%d, cover %v, %d patches, %d replies", s.Version, s.Cover != nil, len(s.Patches), len(s.Replies))
	}
	if !strings.HasSuffix(s.Cover.Subject, "folds over two lines") {
		t.Errorf("cover subject not unfolded: %q", s.Cover.Subject)
	}
	tests := []struct {
		got, want string
	}{
		{s.Patches[0].Title, "x: first"},
		{s.Patches[0].Author, "Josh Poimboeuf <jpoimboe@kernel.org>"},
		{s.Patches[0].Commit, "2222222222222222222222222222222222222222"},
		{s.Patches[0].Log, "From the first line of the body on, this is the message.\n\nSigned-off-by: Josh Poimboeuf <jpoimboe@kernel.org>\n"},
		{s.Patches[0].Changelog, "Changes since v2:\n\n- one change\n"},
		{s.Patches[0].Diffstat, " x.c | 1 +\n 1 file changed, 1 insertion(+)\n"},
		{s.Patches[0].Diff, "diff --git a/x.c b/x.c\nindex 1111111..2222222 100644\n--- a/x.c\n+++ b/x.c\n@@ -1 +1,2 @@\n a\n+b\n"},
		{s.Patches[0].InReplyTo, "c@example.org"},
		{s.Patches[1].Title, "y: second — encoded"},
		{s.Patches[1].Author, "Steven Rostedt <rostedt@goodmis.org>"},
		{s.Patches[1].Changelog, ""},
		{s.Patches[1].CommitMessage(), "y: second — encoded\n\nSecond.\n"},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%d: got %q, want %q", i, tc.got, tc.want)
		}
	}
}

// TestRoundTrip: a series written with WriteDir reads back the same.
func TestRoundTrip(t *testing.T) {
	s, err := mail.Load("testdata/two.mbox")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	names, err := s.WriteDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 3 || filepath.Base(names[1]) != "v3-0001-x-first.patch" {
		t.Errorf("wrote %v", names)
	}
	back, err := mail.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range back.Patches {
		w := s.Patches[i]
		if p.Title != w.Title || p.Author != w.Author || p.Log != w.Log || p.Changelog != w.Changelog || p.Diffstat != w.Diffstat || p.Diff != w.Diff || p.Commit != w.Commit {
			t.Errorf("patch %d differs after the round trip:\n%+v\n%+v", i+1, p, w)
		}
	}
	if _, err := s.WriteDir(dir); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("writing over an existing directory: %v", err)
	}
}

// TestLoadSeed reads the saved v11 thread: 14 patches, the cover letter and
// the replies, authors with addresses.
func TestLoadSeed(t *testing.T) {
	path, err := oracle.SeedPath()
	if err != nil {
		t.Fatal(err)
	}
	s, err := mail.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 11 || len(s.Patches) != 14 || s.Cover == nil || len(s.Replies) != 18 {
		t.Fatalf("v%d, %d patches, cover %v, %d replies", s.Version, len(s.Patches), s.Cover != nil, len(s.Replies))
	}
	for _, p := range s.Patches {
		if !strings.Contains(p.Author, "@") || !strings.HasPrefix(p.Diff, "diff --git ") {
			t.Errorf("patch %d: author %q, diff starts %q", p.Number, p.Author, p.Diff[:min(20, len(p.Diff))])
		}
	}
	if s.Patches[3].Author != "Steven Rostedt <rostedt@goodmis.org>" {
		t.Errorf("patch 4 author %q", s.Patches[3].Author)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.mbox")
	os.WriteFile(empty, []byte("From: a@b\nSubject: hello\n\nno patch\n"), 0o644)
	if _, err := mail.Load(empty); err == nil || !strings.Contains(err.Error(), "no patches found") {
		t.Errorf("mbox without patches: %v", err)
	}
	if _, err := mail.Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
	// Part of a saved thread: not a series, but its messages can be read.
	part := "testdata/part-thread.txt"
	if _, err := mail.Load(part); err == nil || !strings.Contains(err.Error(), "patch 2 of 2 missing") {
		t.Errorf("part of a thread: %v", err)
	}
	if ms, err := mail.LoadMessages(part); err != nil || len(ms) != 2 {
		t.Errorf("LoadMessages of part of a thread: %d messages, %v", len(ms), err)
	}
}

// TestWhere: every message knows its file, the lines it starts on and has
// its subject on, and its text there; LineOf finds lines of that text.
func TestWhere(t *testing.T) {
	s, err := mail.Load("testdata/two.mbox")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile("testdata/two.mbox")
	lines := strings.Split(string(data), "\n")
	tests := []struct {
		m                          *mail.Message
		line, subjectLine, signOff int
	}{
		{s.Cover, 1, 5, 0},
		{&s.Patches[0].Message, 10, 15, 21},
		{&s.Patches[1].Message, 39, 43, 0},
		{s.Replies[0], 60, 64, 0},
	}
	for _, tc := range tests {
		m := tc.m
		if m.File != "testdata/two.mbox" || m.Line != tc.line || m.SubjectLine != tc.subjectLine {
			t.Errorf("%q: %s:%d, subject on %d; want lines %d and %d", m.Subject, m.File, m.Line, m.SubjectLine, tc.line, tc.subjectLine)
		}
		if !strings.HasPrefix(strings.Join(lines[m.Line-1:], "\n"), m.Raw) || !strings.HasPrefix(m.Raw, lines[m.Line-1]+"\n") {
			t.Errorf("%q: Raw is not the file's text from line %d", m.Subject, m.Line)
		}
		if got := m.LineOf("\nSigned-off-by: "); got != 0 && got+1 != tc.signOff || got == 0 && tc.signOff != 0 {
			t.Errorf("%q: Signed-off-by on line %d, want %d", m.Subject, got+1, tc.signOff)
		}
	}
	if f := s.Patches[1].Files; len(f) != 1 || !f[0].IsNew || f[0].NewName != "y.c" {
		t.Errorf("patch 2's diff parsed as %+v", f)
	}
}

// TestWhereSeed: in a thread saved as text a message starts on its
// subject line.
func TestWhereSeed(t *testing.T) {
	path, err := oracle.SeedPath()
	if err != nil {
		t.Fatal(err)
	}
	s, err := mail.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(string(data), "\n")
	for _, p := range s.Patches {
		if p.File != path || p.SubjectLine != p.Line || lines[p.Line-1] != p.Subject || !strings.HasSuffix(p.Raw, p.Body) {
			t.Errorf("patch %d: %s:%d is %q, want its subject %q", p.Number, p.File, p.Line, lines[p.Line-1], p.Subject)
		}
		if len(p.Files) == 0 {
			t.Errorf("patch %d: no diff parsed", p.Number)
		}
	}
}

// Archives serve patches transfer-encoded or as a part of a multipart
// mail. Every message of testdata/two.mbox, encoded each way, reads back
// as the plain mbox does.
func TestEncodedBodies(t *testing.T) {
	plain, err := mail.Load("testdata/two.mbox")
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := mail.LoadMessages("testdata/two.mbox")
	if err != nil {
		t.Fatal(err)
	}
	// Every space, tab and "=" encoded (as any octet may be), lines
	// wrapped with soft breaks at 76 columns, as mailers do.
	qp := func(body string) (string, string) {
		var b strings.Builder
		for _, l := range strings.SplitAfter(body, "\n") {
			line, nl := strings.CutSuffix(l, "\n")
			col := 0
			for _, r := range []byte(line) {
				tok := string(r)
				if r == ' ' || r == '\t' || r == '=' || r >= 0x80 {
					tok = fmt.Sprintf("=%02X", r)
				}
				if col+len(tok) > 75 {
					b.WriteString("=\n")
					col = 0
				}
				b.WriteString(tok)
				col += len(tok)
			}
			if nl {
				b.WriteString("\n")
			}
		}
		return "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: quoted-printable\n", b.String()
	}
	b64 := func(body string) (string, string) {
		enc := base64.StdEncoding.EncodeToString([]byte(body))
		var b strings.Builder
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\n")
		return "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: base64\n", b.String()
	}
	multi := func(body string) (string, string) {
		h, enc := qp(body)
		return "MIME-Version: 1.0\nContent-Type: multipart/signed; boundary=\"=-b\"; protocol=\"application/pgp-signature\"\n",
			"This is a multi-part message in MIME format.\n\n--=-b\n" + h + "\n" + enc + "\n--=-b\nContent-Type: application/pgp-signature\n\nsig\n--=-b--\n"
	}
	for _, tc := range []struct {
		name   string
		encode func(string) (string, string)
	}{{"quoted-printable", qp}, {"base64", b64}, {"multipart", multi}} {
		t.Run(tc.name, func(t *testing.T) {
			var mbox strings.Builder
			for _, m := range msgs {
				raw := m.Raw
				head, _, _ := strings.Cut(raw, "\n\n")
				h, body := tc.encode(m.Body)
				mbox.WriteString(head + "\n" + h + "\n" + body + "\n")
			}
			path := filepath.Join(t.TempDir(), "enc.mbox")
			if err := os.WriteFile(path, []byte(mbox.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := mail.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Patches) != len(plain.Patches) {
				t.Fatalf("%d patches, want %d", len(got.Patches), len(plain.Patches))
			}
			if strings.Contains(mbox.String(), plain.Patches[0].Diff) {
				t.Fatalf("the encoded mbox holds the plain diff: the test encodes nothing")
			}
			for i, p := range got.Patches {
				w := plain.Patches[i]
				for _, f := range [][3]string{{"title", p.Title, w.Title}, {"author", p.Author, w.Author}, {"log", p.Log, w.Log},
					{"changelog", p.Changelog, w.Changelog}, {"diffstat", p.Diffstat, w.Diffstat}, {"diff", p.Diff, w.Diff}} {
					if f[1] != f[2] {
						t.Errorf("patch %d %s: %q, want %q", i+1, f[0], f[1], f[2])
					}
				}
				if len(p.Files) != len(w.Files) {
					t.Errorf("patch %d: %d files parsed, want %d", i+1, len(p.Files), len(w.Files))
				}
			}
		})
	}
}
