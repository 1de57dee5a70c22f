package mail_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/internal/gittest"
	"kpatch/plumbing/mail"
)

// gitSeries makes a repository with a base commit and four commits on it
// that exercise what mail carries: a non-ASCII author (an RFC 2047 From
// header), a body line starting with "From " (an mbox separator to a
// careless reader), a subject long enough that git folds it, a new file.
// It returns the repository's directory.
// Each call returns a new copy of a repository git made once per test
// process (gittest.Template).
func gitSeries(t *testing.T) string {
	t.Helper()
	gittest.Require(t)
	return gittest.Template(t, "mail series", buildSeries)
}

func buildSeries(t testing.TB, dir string) {
	gittest.Run(t, dir, "init", "-q", "-b", "master")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, dir, "add", name)
	}
	write("a.c", "int a;\n")
	gittest.Run(t, dir, "commit", "-q", "-m", "base")
	commits := []struct{ author, file, text, msg string }{
		{"Jöhn Dœ <john@example.org>", "a.c", "int a;\nint b;\n",
			"x: add b\n\nThe first change.\n\nSigned-off-by: Jöhn Dœ <john@example.org>\n"},
		{"Ada Lovelace <ada@example.org>", "a.c", "int a;\nint b;\nint c;\n",
			"x: add c\n\nFrom the body on, a line that starts like an mbox separator.\n\nSigned-off-by: Ada Lovelace <ada@example.org>\n"},
		{"Ada Lovelace <ada@example.org>", "a.c", "int a;\nint c;\n",
			"x: a subject long enough that git format-patch folds it over two header lines\n\nRemove b.\n\nSigned-off-by: Ada Lovelace <ada@example.org>\n"},
		{"Ada Lovelace <ada@example.org>", "new.h", "#define NEW 1\n",
			"x: add new.h\n\nSigned-off-by: Ada Lovelace <ada@example.org>\n"},
	}
	for _, c := range commits {
		write(c.file, c.text)
		gittest.Run(t, dir, "commit", "-q", "--author", c.author, "-m", c.msg)
	}
	gittest.Run(t, dir, "tag", "base", "HEAD~4")
}

func TestMain(m *testing.M) {
	code := m.Run()
	gittest.RemoveTemplates()
	os.Exit(code)
}

// amRecord is what git am recorded for one patch.
type amRecord struct{ message, author string }

// gitAm applies the mail files to a new branch at the tag base with the
// real git am and returns what it recorded for each commit, in order.
func gitAm(t *testing.T, repo string, files ...string) []amRecord {
	t.Helper()
	gittest.Run(t, repo, "checkout", "-q", "-B", "am", "base")
	defer gittest.Run(t, repo, "checkout", "-q", "master")
	cmd := exec.Command("git", append([]string{"am", "-q"}, files...)...)
	cmd.Dir, cmd.Env = repo, gittest.Environ(repo)
	if out, err := cmd.CombinedOutput(); err != nil {
		exec.Command("git", "-C", repo, "am", "--abort").Run()
		t.Fatalf("git am %s: %v\n%s", strings.Join(files, " "), err, out)
	}
	out := string(gittest.Run(t, repo, "log", "--reverse", "-z", "--format=%an <%ae>%n%B", "base..am"))
	var recs []amRecord
	for _, c := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		author, msg, _ := strings.Cut(c, "\n")
		recs = append(recs, amRecord{strings.TrimRight(msg, "\n"), author})
	}
	return recs
}

// filesIn lists the files of dir, sorted, without the cover letter (git
// am would refuse it as an empty patch).
func filesIn(t *testing.T, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !strings.Contains(e.Name(), "cover") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// stripFromLines copies every file of dir without its first line (the
// "From <sha> Mon Sep 17 00:00:00 2001" line) into a new directory: mail
// as a mailer saves it, which git am takes.
func stripFromLines(t *testing.T, dir string) string {
	out := t.TempDir()
	for _, f := range filesIn(t, dir) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(string(data), "\n")
		if !strings.HasPrefix(first, "From ") {
			t.Fatalf("%s starts %q", f, first)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), []byte(rest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// crlf rewrites the file at path with CRLF line ends, as a mailer on
// another system may save it, and returns path.
func crlf(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err == nil {
		err = os.WriteFile(path, []byte(strings.ReplaceAll(string(data), "\n", "\r\n")), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadsWhatGitAmReads: every form git format-patch writes a series in
// (numbered or not, -k, --stdout, a single patch, a cover letter, files
// without their "From " line, b4 am's mbox) is read as the real git am
// reads it: the same patches in the same order, each with the commit
// message and author git am records.
func TestReadsWhatGitAmReads(t *testing.T) {
	repo := gitSeries(t)
	tmp := t.TempDir()
	formatDir := func(name string, args ...string) string {
		d := filepath.Join(tmp, name)
		gittest.Run(t, repo, append([]string{"format-patch", "-q", "-o", d}, args...)...)
		return d
	}
	stdout := func(name string, args ...string) string {
		p := filepath.Join(tmp, name)
		out := gittest.Run(t, repo, append([]string{"format-patch", "--stdout"}, args...)...)
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	numbered := formatDir("numbered", "base..master")
	tests := []struct {
		name string
		path string   // what kpatch reads
		am   []string // what git am is given; path when nil
		n    int      // patches
	}{
		{"directory, numbered", numbered, filesIn(t, numbered), 4},
		{"directory, -N", formatDir("N", "-N", "base..master"), nil, 4},
		{"directory, --no-numbered -v3", formatDir("v3N", "--no-numbered", "-v3", "base..master"), nil, 4},
		{"directory, -k", formatDir("k", "-k", "base..master"), nil, 4},
		{"directory, --from (in-body From lines)", formatDir("from", "--from=Sam Sender <sam@example.org>", "base..master"), nil, 4},
		{"directory, [RFC][PATCH m/n] prefixes", formatDir("rfc", "--subject-prefix=RFC][PATCH", "base..master"), nil, 4},
		{"directory, cover letter, -v2", formatDir("cover", "--cover-letter", "-v2", "base..master"), nil, 4},
		{"mbox, numbered", stdout("numbered.mbox", "base..master"), nil, 4},
		{"mbox, -N", stdout("N.mbox", "-N", "base..master"), nil, 4},
		{"mbox, CRLF line ends", crlf(t, stdout("crlf.mbox", "base..master")), nil, 4},
		{"single patch", stdout("one.patch", "-1", "master"), nil, 1},
		{"single patch of many, numbered", stdout("one-numbered.patch", "--numbered", "-1", "master"), nil, 1},
		{"directory without From lines", stripFromLines(t, numbered), nil, 4},
		{"directory without From lines, -N", stripFromLines(t, formatDir("N2", "-N", "base..master")), nil, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			am := tc.am
			if am == nil {
				if st, _ := os.Stat(tc.path); st.IsDir() {
					am = filesIn(t, tc.path)
				} else {
					am = []string{tc.path}
				}
			}
			want := gitAm(t, repo, am...)
			s, err := mail.Load(tc.path)
			if err != nil {
				t.Fatalf("git am takes it, kpatch refuses it: %v", err)
			}
			if len(s.Patches) != tc.n || len(want) != tc.n {
				t.Fatalf("%d patches read, git am applied %d, want %d", len(s.Patches), len(want), tc.n)
			}
			for i, p := range s.Patches {
				if p.Number != i+1 || p.Total != tc.n {
					t.Errorf("patch %d numbered %d/%d", i+1, p.Number, p.Total)
				}
				got := amRecord{strings.TrimRight(p.CommitMessage(), "\n"), p.Author}
				if got != want[i] {
					t.Errorf("patch %d:\n got %q\nwant %q (git am)", i+1, got, want[i])
				}
				if strings.Contains(p.Log, "Subject:") || strings.Contains(p.Log, "Date:") {
					t.Errorf("patch %d: mail headers in the commit message: %q", i+1, p.Log)
				}
				if len(p.Files) != 1 {
					t.Errorf("patch %d: %d files parsed, want 1", i+1, len(p.Files))
				}
			}
		})
	}
}

// TestReadsB4Mbox reads what b4 am writes from a git format-patch series
// (testdata/b4/v2_x_two_changes.mbx, written by b4 0.12.0 with
// testdata/b4/make.sh) as git am reads it, ">From " quoting included (b4
// writes mboxrd, git am reads mboxo and keeps it); with b4 installed, also
// a series b4 am writes now.
func TestReadsB4Mbox(t *testing.T) {
	repo := gitSeries(t)
	check := func(t *testing.T, mbx string, n int) {
		abs, err := filepath.Abs(mbx)
		if err != nil {
			t.Fatal(err)
		}
		want := gitAm(t, repo, abs)
		s, err := mail.Load(mbx)
		if err != nil {
			t.Fatalf("git am takes it, kpatch refuses it: %v", err)
		}
		if len(s.Patches) != n || len(want) != n {
			t.Fatalf("%d patches read, git am applied %d, want %d", len(s.Patches), len(want), n)
		}
		for i, p := range s.Patches {
			got := amRecord{strings.TrimRight(p.CommitMessage(), "\n"), p.Author}
			if got != want[i] {
				t.Errorf("patch %d:\n got %q\nwant %q (git am)", i+1, got, want[i])
			}
		}
	}
	t.Run("testdata", func(t *testing.T) { check(t, "testdata/b4/v2_x_two_changes.mbx", 2) })
	t.Run("b4 am now", func(t *testing.T) {
		if _, err := exec.LookPath("b4"); err != nil {
			t.Skip("b4 not installed (apt-get install b4)")
		}
		in := filepath.Join(t.TempDir(), "thread.mbox")
		// As lore serves a thread: mboxrd (b4 0.12.0 splits a message at
		// a body line that starts with "From "), the first two patches (it
		// fails on the third's folded subject).
		out := gittest.Run(t, repo, "format-patch", "--stdout", "--pretty=mboxrd", "--thread", "--cover-letter", "-v2", "base..master~2")
		if err := os.WriteFile(in, []byte(strings.Replace(string(out), "*** SUBJECT HERE ***", "x: two changes", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		outDir := t.TempDir()
		cmd := exec.Command("b4", "--offline-mode", "am", "--no-add-trailers", "-m", in, "-o", outDir)
		cmd.Dir = repo
		cmd.Env = gittest.Environ(repo)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("b4 am: %v\n%s", err, b)
		}
		mbx, _ := filepath.Glob(filepath.Join(outDir, "*.mbx"))
		if len(mbx) != 1 {
			t.Fatalf("b4 am wrote %v", mbx)
		}
		check(t, mbx[0], 2)
	})
}

// TestMessagesAsGitAm reads patch mails whose commit message git am
// cleans or takes headers from: what kpatch reads (commit message, author,
// author date) is what the real git am records.
func TestMessagesAsGitAm(t *testing.T) {
	repo := gitSeries(t)
	const diff = "---\n a.c | 1 +\n 1 file changed, 1 insertion(+)\n\n" +
		"diff --git a/a.c b/a.c\nindex 1b8e2ce..0a5a2b5 100644\n--- a/a.c\n+++ b/a.c\n@@ -1 +1,2 @@\n int a;\n+int b;\n-- \n2.39.5\n\n"
	tests := []struct{ name, body string }{
		// git stripspace
		{"trailing spaces and tabs", "The first line. \nThe second.\t\n \t\nSigned-off-by: A <a@example.org>  \n"},
		{"runs of blank lines", "One.\n\n\n\nTwo.\n \n\t\n\nSigned-off-by: A <a@example.org>\n\n\n"},
		{"carriage returns", "One.\r\n\r\nTwo.\r\n"},
		{"title only", ""},
		{"title only, blank lines", "\n\n \n"},
		// in-body headers (git mailinfo)
		{"in-body From", "From: Real Author <real@example.org>\n\nBody.\n"},
		{"lower-case from", "from: Lower Case <lower@example.org>\n\nBody.\n"},
		{"in-body Subject", "Subject: the real title\n\nBody.\n"},
		{"in-body Subject with a prefix", "Subject: [PATCH v3 2/5] the real title\n\nBody.\n"},
		{"in-body Date", "Date: Tue, 2 Jan 2024 11:00:00 +0100\n\nBody.\n"},
		{"all three, folded", "From: Real\n Author <real@example.org>\nsubject: a folded\n\ttitle\nDATE: Wed, 3 Jan 2024 12:30:00 -0500\n\nBody.\n"},
		{"after blank lines", "\n\nFrom: Real Author <real@example.org>\n\nBody.\n"},
		{"no blank line after", "From: Real Author <real@example.org>\nBody right after.\n"},
		{"twice", "From: First <first@example.org>\nFrom: Second <second@example.org>\n\nBody.\n"},
		{"no space after the colon", "From:Tight <tight@example.org>\n\nBody.\n"},
		{"old-style [PATCH] line", "[PATCH] the old-style title\n\nBody.\n"},
		{"format-patch separator", ">From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\nFrom: Real Author <real@example.org>\n\nBody.\n"},
		{"other >From", ">From here on\n\nBody.\n"},
		{"not at the start", "Body first.\n\nFrom: Real Author <real@example.org>\n"},
		{"encoded name", "From: =?UTF-8?q?J=C3=B6hn?= <john@example.org>\n\nBody.\n"},
	}
	dir := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("%02d.patch", i))
			m := "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n" +
				"From: Sender <sender@example.org>\nDate: Mon, 1 Jan 2024 10:00:00 +0000\nSubject: [PATCH] mail title\n" +
				"MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n\n" +
				tc.body + diff
			if err := os.WriteFile(path, []byte(m), 0o644); err != nil {
				t.Fatal(err)
			}
			gittest.Run(t, repo, "checkout", "-q", "-B", "am", "base")
			cmd := exec.Command("git", "am", "-q", path)
			cmd.Dir, cmd.Env = repo, gittest.Environ(repo)
			if out, err := cmd.CombinedOutput(); err != nil {
				exec.Command("git", "-C", repo, "am", "--abort").Run()
				t.Fatalf("git am: %v\n%s", err, out)
			}
			f := strings.Split(string(gittest.Run(t, repo, "log", "-1", "--format=%an <%ae>%x00%aD%x00%B")), "\x00")
			want := [3]string{f[0], f[1], strings.TrimSuffix(f[2], "\n")}
			s, err := mail.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			p := s.Patches[0]
			if got := [3]string{p.Author, p.AuthorDate, p.CommitMessage()}; got != want {
				t.Errorf("\n got %q\nwant %q (git am)", got, want)
			}
		})
	}
}

// TestLinesAsGitAm reads mails whose lines git am reads in two ways: a
// diff of a file with CRLF lines (the carriage returns are part of the
// lines, as git am --keep-cr keeps them, so the patch applies), and a
// line of 70 MB (read whole, as git am reads it). Each is compared with
// the file the real git am makes of it (for the 70 MB line seconds of
// git, so in the full tier; under -short with the file the diff makes,
// from a mail written as git format-patch writes it).
func TestLinesAsGitAm(t *testing.T) {
	repo := gitSeries(t)
	for _, tc := range []struct {
		name, added string
		args        []string
		slow        bool // git am takes seconds
	}{
		{"CRLF lines in the diff", "int b;\r\nint c;\r\n", []string{"--keep-cr"}, false},
		{"a line of 70 MB", "int b; /*" + strings.Repeat(" long", 14<<20) + " */\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "0001.patch")
			want := "int a;\n" + tc.added
			if tc.slow && testing.Short() {
				// The mail git format-patch writes, without git.
				m := "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\n" +
					"Date: Mon, 1 Jan 2024 10:00:00 +0000\nSubject: [PATCH] x: lines\n\n---\n" +
					"diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1 +1,2 @@\n int a;\n+" + tc.added + "-- \n2.39.5\n\n"
				if err := os.WriteFile(path, []byte(m), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				gittest.Run(t, repo, "checkout", "-q", "-B", "lines", "base")
				if err := os.WriteFile(filepath.Join(repo, "a.c"), []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				gittest.Run(t, repo, "commit", "-q", "-a", "-m", "x: lines")
				if err := os.WriteFile(path, gittest.Run(t, repo, "format-patch", "--stdout", "-1"), 0o644); err != nil {
					t.Fatal(err)
				}
				gittest.Run(t, repo, "checkout", "-q", "-B", "am", "base")
				cmd := exec.Command("git", append(append([]string{"am", "-q"}, tc.args...), path)...)
				cmd.Dir, cmd.Env = repo, gittest.Environ(repo)
				if out, err := cmd.CombinedOutput(); err != nil {
					exec.Command("git", "-C", repo, "am", "--abort").Run()
					t.Fatalf("git am: %v\n%s", err, out)
				}
				want = string(gittest.Run(t, repo, "show", "am:a.c"))
			}
			s, err := mail.Load(path)
			if err != nil {
				t.Fatalf("git am takes it, kpatch refuses it: %v", err)
			}
			var got strings.Builder
			for _, l := range s.Patches[0].Files[0].TextFragments[0].Lines {
				if l.Op != gitdiff.OpDelete {
					got.WriteString(l.Line)
				}
			}
			if got.String() != want {
				t.Errorf("the diff makes a.c of %d bytes (%q...), git am %d (%q...)", got.Len(), got.String()[:min(got.Len(), 20)], len(want), want[:min(len(want), 20)])
			}
		})
	}
}

// TestFlowedAsGitAm reads format=flowed mails (RFC 3676) as git am does:
// soft line breaks joined (with delsp=yes without their space),
// space-stuffed lines unstuffed, so that a patch its mailer stuffed
// applies, and one it did not is refused by both.
func TestFlowedAsGitAm(t *testing.T) {
	repo := gitSeries(t)
	// The context line " int a;" is space-stuffed as RFC 3676 wants.
	const stuffed = "---\n  a.c | 1 +\n  1 file changed, 1 insertion(+)\n\n" +
		"diff --git a/a.c b/a.c\nindex 1b8e2ce..0a5a2b5 100644\n--- a/a.c\n+++ b/a.c\n@@ -1 +1,2 @@\n  int a;\n+int b;\n-- \n2.39.5\n\n"
	tests := []struct {
		name, params, body string
		refused            bool
	}{
		{"soft breaks", "", "A paragraph that a mailer \nflowed over \nthree lines.\n\nSigned-off-by: A <a@example.org>\n" + stuffed, false},
		{"delsp=yes", "; delsp=yes", "A paragraph that a mailer \nflowed over \nthree lines.\n\nSigned-off-by: A <a@example.org>\n" + stuffed, false},
		{"stuffed lines in the message", "", "  indented by two\n >not a quote\n From the body on\n\nSigned-off-by: A <a@example.org>\n" + stuffed, false},
		{"diff not stuffed", "", "Body.\n" + strings.Replace(stuffed, "\n  int a;\n", "\n int a;\n", 1), true},
	}
	dir := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("%02d.patch", i))
			m := "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n" +
				"From: Sender <sender@example.org>\nDate: Mon, 1 Jan 2024 10:00:00 +0000\nSubject: [PATCH] mail title\n" +
				"MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8; format=flowed" + tc.params + "\nContent-Transfer-Encoding: 8bit\n\n" + tc.body
			if err := os.WriteFile(path, []byte(m), 0o644); err != nil {
				t.Fatal(err)
			}
			gittest.Run(t, repo, "checkout", "-q", "-B", "am", "base")
			cmd := exec.Command("git", "am", "-q", path)
			cmd.Dir, cmd.Env = repo, gittest.Environ(repo)
			out, amErr := cmd.CombinedOutput()
			if amErr != nil {
				exec.Command("git", "-C", repo, "am", "--abort").Run()
			}
			s, err := mail.Load(path)
			switch {
			case tc.refused && amErr == nil:
				t.Fatalf("git am takes it; the test expects a refusal")
			case tc.refused:
				if err == nil {
					t.Errorf("git am refuses it (%s), kpatch reads it", strings.TrimSpace(string(out)))
				}
				return
			case amErr != nil:
				t.Fatalf("git am: %v\n%s", amErr, out)
			case err != nil:
				t.Fatalf("git am takes it, kpatch refuses it: %v", err)
			}
			want := strings.TrimSuffix(string(gittest.Run(t, repo, "log", "-1", "--format=%B")), "\n")
			if got := s.Patches[0].CommitMessage(); got != want {
				t.Errorf("message %q, git am %q", got, want)
			}
			if len(s.Patches[0].Files) != 1 {
				t.Errorf("%d files in the diff, want 1", len(s.Patches[0].Files))
			}
		})
	}
}
