package mail_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"kpatch/internal/gittest"
	"kpatch/plumbing/mail"
)

// writeFile writes text to name in a new temporary directory and returns
// its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// gitApplyCheck runs git apply --check on the mail in repo at base and
// returns its error output, "" when git takes it.
func gitApplyCheck(t *testing.T, repo, path string) string {
	t.Helper()
	gittest.Run(t, repo, "checkout", "-q", "base")
	defer gittest.Run(t, repo, "checkout", "-q", "master")
	cmd := exec.Command("git", "apply", "--check", path)
	cmd.Dir = repo
	cmd.Env = gittest.Environ(repo)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return ""
	}
	return string(out)
}

// TestRefusedAsGitRefuses: input git refuses is refused, with the cause
// named as git names it and the place; duplicated and out-of-range patch
// numbers are named as such (a duplicate was reported as a missing patch,
// 15/14 was taken).
func TestRefusedAsGitRefuses(t *testing.T) {
	repo := gitSeries(t)
	numbered := string(gittest.Run(t, repo, "format-patch", "--stdout", "-v12", "base..master"))
	// A new file of 11 lines, its hunk header made corrupt as a hostile
	// sender might: git apply says "corrupt patch".
	var eleven strings.Builder
	for i := 1; i <= 11; i++ {
		eleven.WriteString("#define L" + string(rune('a'+i)) + " 1\n")
	}
	if err := os.WriteFile(filepath.Join(repo, "eleven.h"), []byte(eleven.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "checkout", "-q", "-b", "eleven", "base")
	gittest.Run(t, repo, "add", "eleven.h")
	gittest.Run(t, repo, "commit", "-q", "-m", "x: add eleven.h\n\nSigned-off-by: Ada Lovelace <ada@example.org>")
	good := string(gittest.Run(t, repo, "format-patch", "--stdout", "-1"))
	gittest.Run(t, repo, "checkout", "-q", "master")
	if !strings.Contains(good, "\n@@ -0,0 +1,11 @@\n") {
		t.Fatalf("git wrote no @@ -0,0 +1,11 @@ hunk:\n%s", good)
	}
	corrupt := writeFile(t, "corrupt.patch", []byte(strings.Replace(good, "\n@@ -0,0 +1,11 @@\n", "\n@@ --1,0 +1,11 @@\n", 1)))
	if msg := gitApplyCheck(t, repo, corrupt); !strings.Contains(msg, "corrupt patch at line") {
		t.Fatalf("git apply --check takes the corrupt hunk header: %q", msg)
	}
	beyond := strings.Replace(numbered, "[PATCH v12 4/4]", "[PATCH v12 5/4]", 1)
	dup := strings.Replace(numbered, "[PATCH v12 3/4]", "[PATCH v12 2/4]", 1)

	tests := []struct {
		name, file, text string
		want             []string // all in the one-line error
	}{
		{"corrupt hunk header", "corrupt.patch", strings.Replace(good, "\n@@ -0,0 +1,11 @@\n", "\n@@ --1,0 +1,11 @@\n", 1),
			[]string{"corrupt.patch:", "corrupt hunk header", "@@ --1,0 +1,11 @@", "git apply"}},
		{"number beyond the total", "beyond.mbox", beyond, []string{"beyond.mbox:", "patch 5 of 4", "beyond"}},
		{"duplicated number", "dup.mbox", dup, []string{"dup.mbox:", "patch 2 of 4", "twice"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mail.Load(writeFile(t, tc.file, []byte(tc.text)))
			if err == nil {
				t.Fatal("taken")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			checkMessage(t, err)
		})
	}
}

// checkMessage fails for an error that is not one line or names a
// package of kpatch ("oracle: ...").
func checkMessage(t *testing.T, err error) {
	t.Helper()
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%q is not one line", err)
	}
	if m := internalName.FindString(err.Error()); m != "" {
		t.Errorf("%q names an internal package (%q)", err, m)
	}
}

// internalName matches the name of a package of kpatch used as an error
// prefix.
var internalName = regexp.MustCompile(`\b(oracle|mail|patchmail|mailbody|gitdiff|verify|series):\s`)

// TestAttachedDiff: a patch whose diff is a MIME attachment, as git
// format-patch --attach and --inline write it (and base64-encoded, as
// mailers attach files), is read as git am reads it.
func TestAttachedDiff(t *testing.T) {
	repo := gitSeries(t)
	// The first commit: it applies to base, and its author is not ASCII.
	attach := gittest.Run(t, repo, "format-patch", "--stdout", "--attach", "-1", "master~3")
	inline := gittest.Run(t, repo, "format-patch", "--stdout", "--inline", "-1", "master~3")
	// The attachment base64-encoded, as a mailer sends a file.
	head, part, ok := bytes.Cut(attach, []byte("Content-Transfer-Encoding: 8bit\nContent-Disposition: attachment"))
	if !ok {
		t.Fatalf("no attachment part in git's output:\n%s", attach)
	}
	hdr, rest, _ := bytes.Cut(part, []byte("\n\n"))
	body, tail, _ := bytes.Cut(rest, []byte("\n--------------"))
	enc := base64.StdEncoding.EncodeToString(append(body, '\n'))
	var b64 bytes.Buffer
	b64.Write(head)
	b64.WriteString("Content-Transfer-Encoding: base64\nContent-Disposition: attachment")
	b64.Write(hdr)
	b64.WriteString("\n\n")
	for len(enc) > 76 {
		b64.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	b64.WriteString(enc + "\n\n--------------")
	b64.Write(tail)
	for name, data := range map[string][]byte{"attach": attach, "inline": inline, "base64": b64.Bytes()} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, name+".patch", data)
			want := gitAm(t, repo, path)
			s, err := mail.Load(path)
			if err != nil {
				t.Fatalf("git am takes it, kpatch refuses it: %v", err)
			}
			if len(s.Patches) != 1 || len(want) != 1 {
				t.Fatalf("%d patches, git am %d", len(s.Patches), len(want))
			}
			p := s.Patches[0]
			if got := (amRecord{strings.TrimRight(p.CommitMessage(), "\n"), p.Author}); got != want[0] {
				t.Errorf("got %q\nwant %q (git am)", got, want[0])
			}
			if len(p.Files) != 1 || p.Files[0].NewName != "a.c" || len(p.Files[0].TextFragments) != 1 {
				t.Errorf("diff read as %+v", p.Files)
			}
			if p.Diffstat == "" {
				t.Error("no diffstat read")
			}
		})
	}
}

// TestUTF16 names UTF-16 input as such and says to convert it (git am
// says "Patch format detection failed"; kpatch said "cut short").
func TestUTF16(t *testing.T) {
	repo := gitSeries(t)
	text := string(gittest.Run(t, repo, "format-patch", "--stdout", "-1"))
	enc := func(bigEndian, bom bool) []byte {
		u := utf16.Encode([]rune(text))
		if bom {
			u = append([]uint16{0xfeff}, u...)
		}
		var b bytes.Buffer
		for _, c := range u {
			if bigEndian {
				b.WriteByte(byte(c >> 8))
				b.WriteByte(byte(c))
			} else {
				b.WriteByte(byte(c))
				b.WriteByte(byte(c >> 8))
			}
		}
		return b.Bytes()
	}
	for _, tc := range []struct {
		name      string
		data      []byte
		endianess string
		bom       bool
	}{
		{"little-endian with BOM", enc(false, true), "UTF-16LE", true},
		{"big-endian with BOM", enc(true, true), "UTF-16BE", true},
		{"little-endian without BOM", enc(false, false), "UTF-16LE", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "u16.patch", tc.data)
			_, err := mail.Load(path)
			if err == nil {
				t.Fatal("taken")
			}
			from := tc.endianess
			if tc.bom {
				from = "UTF-16"
			}
			for _, w := range []string{"u16.patch", "is " + tc.endianess, "iconv -f " + from + " -t UTF-8"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			checkMessage(t, err)
			cmd := exec.Command("git", "am", path)
			cmd.Dir, cmd.Env = repo, gittest.Environ(repo)
			if out, err := cmd.CombinedOutput(); err == nil {
				t.Errorf("git am takes UTF-16 input: %s", out)
			}
			exec.Command("git", "-C", repo, "am", "--abort").Run()
			// In a directory too.
			dir := filepath.Dir(path)
			if _, err := mail.Load(dir); err == nil || !strings.Contains(err.Error(), tc.endianess) {
				t.Errorf("directory: %v", err)
			}
		})
	}
}

// TestThreadErrorsNameNoPackage: the saved-thread reader's refusals (a
// duplicated, a missing patch, no "---", no diff) are one line, name the
// place and no package of kpatch.
func TestThreadErrorsNameNoPackage(t *testing.T) {
	patch := func(n int, body string) string {
		return "[PATCH v3 0" + string(rune('0'+n)) + "/03] x: change\n\n[Ada Lovelace]\n\n" + body + "\n"
	}
	ok := "Body.\n\nSigned-off-by: Ada Lovelace <ada@example.org>\n---\n a.c | 1 +\n 1 file changed, 1 insertion(+)\n\ndiff --git a/a.c b/a.c\nindex 1111111..2222222 100644\n--- a/a.c\n+++ b/a.c\n@@ -1 +1,2 @@\n a\n+b\n"
	tests := []struct {
		name, text string
		want       []string
	}{
		{"duplicated", patch(1, ok) + patch(2, ok) + patch(2, ok) + patch(3, ok), []string{"patch 2 of 3", "twice"}},
		{"missing", patch(1, ok) + patch(3, ok), []string{"patch 2 of 3", "missing"}},
		{"no ---", patch(1, "Body.\n"), []string{"patch 1 of 3", `no "---" line`}},
		{"no diff", patch(1, "Body.\n---\n a.c | 1 +\n"), []string{"patch 1 of 3", "no diff"}},
		{"corrupt hunk header", patch(1, strings.Replace(ok, "@@ -1 +1,2 @@", "@@ --1 +1,2 @@", 1)) + patch(2, ok) + patch(3, ok), []string{"patch 1 of 3", "corrupt hunk header"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "thread.txt", []byte(tc.text))
			_, err := mail.Load(path)
			if err == nil {
				t.Fatal("taken")
			}
			for _, w := range append(tc.want, "thread.txt:") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			checkMessage(t, err)
		})
	}
}
