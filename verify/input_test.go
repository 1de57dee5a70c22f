package verify

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/oracle"
	"kpatch/internal/seriestest"
	"kpatch/plumbing/kernelsrc"
	"kpatch/series"
)

// key identifies a finding independently of where its mail was read from:
// code findings by file and line, message findings by their message.
type key struct {
	ID, Message, File string
	Patch, Line       int
}

func keys(s *Series, fs []Finding) map[key]int {
	out := map[key]int{}
	for _, f := range fs {
		k := key{ID: f.ID, Message: f.Message, Patch: f.Patch}
		if p := s.Patch(f.Patch); p == nil || f.File != p.MailFile {
			k.File, k.Line = f.File, f.Line
		}
		out[k]++
	}
	return out
}

// TestMailInputs reads v11 as kpatch gen writes it, as an mbox and as a
// directory of .patch files, with the base tree: the contents rebuilt from
// the mail equal the generator's after every patch, and the findings are
// the same.
func TestMailInputs(t *testing.T) {
	dir := t.TempDir()
	g := v11Generator(t)
	msgs := seriestest.Messages(t, g)
	if _, err := series.WriteDir(filepath.Join(dir, "out"), msgs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "v11.mbox"), []byte(series.Mbox(msgs)), 0o644); err != nil {
		t.Fatal(err)
	}
	want := v11Generated(t)
	wantKeys := keys(want, Run(want, seriesOpts(t)))
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"out", "v11.mbox"} {
		t.Run(in, func(t *testing.T) {
			s, err := ReadMail(filepath.Join(dir, in), tree)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Patches) != 14 || s.Sender != g.Revision.From {
				t.Fatalf("%d patches, sender %q; want 14 and %q", len(s.Patches), s.Sender, g.Revision.From)
			}
			for i, p := range s.Patches {
				wp := want.Patches[i]
				if p.Number != i+1 || p.Subject != wp.Subject || p.Author != wp.Author || p.Log != wp.Log || p.Changelog != wp.Changelog {
					t.Errorf("patch %d: header or message differs from the generated one", i+1)
				}
				for j, f := range p.Files {
					wf := wp.Files[j]
					if f.Path != wf.Path || !f.Known || !bytes.Equal(f.New, wf.New) {
						t.Errorf("patch %d: %s: rebuilt content differs from the generator's (known %v)", p.Number, f.Path, f.Known)
					}
				}
			}
			got := keys(s, Run(s, seriesOpts(t)))
			for k, n := range wantKeys {
				if got[k] != n {
					t.Errorf("generated has %d of %+v, %s has %d", n, k, in, got[k])
				}
			}
			for k, n := range got {
				if wantKeys[k] == 0 {
					t.Errorf("%s has %d of %+v, generated none", in, n, k)
				}
			}
		})
	}
}

// TestSeedWithoutTree: the seed read without a tree rebuilds every file the
// series creates (and none it edits), with the hashes the thread names.
func TestSeedWithoutTree(t *testing.T) {
	s := seed(t)
	if len(s.Patches) != 14 || s.Sender != "Steven Rostedt" {
		t.Fatalf("%d patches, sender %q", len(s.Patches), s.Sender)
	}
	created, edited := 0, 0
	for _, p := range s.Patches {
		for _, f := range p.Files {
			if f.Known {
				created++
			}
			if !f.Created && p.Number == 13 && f.Known {
				t.Errorf("patch 13: %s known without a tree", f.Path)
			}
			if !f.Known {
				edited++
			}
		}
	}
	if created != 39 || edited == 0 {
		t.Errorf("%d created-file versions known (want 39, as oracle rebuilds), %d unknown", created, edited)
	}
}

// TestMailLines: the lines verify points findings on commit messages at
// are the file's: every patch's first line, subject line and the line of
// its "---", in an mbox, a directory and the seed.
func TestMailLines(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("testdata/mail/good.mbox")
	if err != nil {
		t.Fatal(err)
	}
	// The same mails as a directory, one file each (cover letter included).
	msgs := strings.SplitAfter(string(good), "\n-- \n2.47.2\n\n")
	for i, m := range msgs {
		if m == "" {
			continue
		}
		if i == 0 { // the cover letter has no signature: split it off
			c, rest, _ := strings.Cut(m, "\nFrom 1111")
			os.WriteFile(filepath.Join(dir, "0000-cover.patch"), []byte(c+"\n"), 0o644)
			m = "From 1111" + rest
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%04d.patch", i+1)), []byte(m), 0o644)
	}
	seedPath, err := oracle.SeedPath()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path     string
		first, subject string // prefixes of the message's first line and subject line; %d: its number
	}{
		{"mbox", "testdata/mail/good.mbox", "From ", "Subject: [PATCH v2 %d/2] "},
		{"directory", dir, "From ", "Subject: [PATCH v2 %d/2] "},
		{"seed", seedPath, "[PATCH v11 %02d/14] ", "[PATCH v11 %02d/14] "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadMail(tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range s.Patches {
				file := tc.path
				if st, _ := os.Stat(tc.path); st.IsDir() {
					file = filepath.Join(tc.path, p.MailFile)
				}
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(string(data), "\n")
				at := func(n int) string {
					if n < 1 || n > len(lines) {
						return fmt.Sprintf("<no line %d>", n)
					}
					return lines[n-1]
				}
				for _, c := range []struct {
					what, want string
					line       int
				}{
					{"first line", numbered(tc.first, p.Number), p.MailLine},
					{"subject", numbered(tc.subject, p.Number), p.SubjectLine},
					{"\"---\"", "---", p.line("\n---\n") + 1},
					{"diff", "diff --git a/", p.line("\ndiff --git ") + 1},
				} {
					if !strings.HasPrefix(at(c.line), c.want) {
						t.Errorf("patch %d: %s at %s:%d is %q, want it to start with %q", p.Number, c.what, p.MailFile, c.line, at(c.line), c.want)
					}
				}
				if !strings.HasPrefix(string(data[mailOffset(data, p.MailLine):]), p.Mail) {
					t.Errorf("patch %d: Mail is not the text of %s from line %d on", p.Number, p.MailFile, p.MailLine)
				}
			}
		})
	}
}

// numbered puts n into format if it has a verb.
func numbered(format string, n int) string {
	if !strings.Contains(format, "%") {
		return format
	}
	return fmt.Sprintf(format, n)
}

// mailOffset returns the offset of line n (1-based) of data.
func mailOffset(data []byte, n int) int {
	off := 0
	for i := 1; i < n && off < len(data); i++ {
		j := bytes.IndexByte(data[off:], '\n')
		if j < 0 {
			return len(data)
		}
		off += j + 1
	}
	return off
}

// TestBadPatchSkipped: a patch of an mbox that cannot be read (a hunk
// that miscounts its lines, a body not in UTF-8) is one PATCH_APPLY
// error at its place, saying why and what to do, and the other patches
// are checked, as git am --skip goes on (the series was refused whole).
func TestBadPatchSkipped(t *testing.T) {
	for _, tc := range []struct {
		name string
		line int
		want []string // substrings of the message: the cause, what to do
	}{
		{"truncated-diff.mbox", 56, []string{"patch 2 of 2", "miscounts lines", "cut short", "as git format-patch or b4 wrote it", "git am --skip"}},
		{"latin1.mbox", 45, []string{"patch 2 of 2", "not UTF-8", "iconv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadMail(filepath.Join("testdata/mail", tc.name), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Patches) != 1 {
				t.Errorf("%d patches checked, want the readable one", len(s.Patches))
			}
			got := only(Run(s, Options{}), "PATCH_APPLY")
			if len(got) != 1 || got[0].File != tc.name || got[0].Line != tc.line {
				t.Fatalf("PATCH_APPLY %+v, want one at %s:%d", got, tc.name, tc.line)
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0].Message, w) {
					t.Errorf("%q lacks %q", got[0].Message, w)
				}
			}
		})
	}
}

// TestBadMail: input that is not a series gets one line naming the cause
// and what to do, and no Series.
func TestBadMail(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string // substrings of the error: where, the cause, what to do
	}{
		{"notmail.txt", []string{"notmail.txt: ", "not an mbox", "give an mbox"}},
		{"nopatches", []string{"nopatches: ", "without .patch", "give an mbox"}},
		{"missing.mbox", []string{"missing.mbox", "no such file", "give an mbox"}},
		{"truncated-headers.mbox", []string{"truncated-headers.mbox:38: ", "without a Subject", "give whole mails"}},
		{"truncated-series.mbox", []string{"truncated-series.mbox: ", "patch 2 of 2 missing", "give every patch"}},
		{"truncated-thread.txt", []string{"truncated-thread.txt: ", "patch 2 of 2 missing", "give every patch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadMail(filepath.Join("testdata/mail", tc.name), nil)
			if err == nil {
				t.Fatalf("no error; %d patches", len(s.Patches))
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error of more than one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
	// The same mails, intact, read.
	s, err := ReadMail("testdata/mail/good.mbox", nil)
	if err != nil || len(s.Patches) != 2 || !s.Patches[1].Files[0].Known || !strings.Contains(string(s.Patches[1].Files[0].New), "return 1;") {
		t.Fatalf("good.mbox: %v", err)
	}
}

// TestHunkNotApplying: a hunk of an edit to an existing file that does not
// apply to --tree is reported as PATCH_APPLY, naming the patch's hunk and
// the base, at the hunk's line in the mail; the other patches are read as
// before, on the tree git apply --reject leaves (a later hunk whose
// context is the refused hunk's lines does not apply either, as in git).
func TestHunkNotApplying(t *testing.T) {
	g := v11Generator(t)
	mbox := series.Mbox(seriestest.Messages(t, g))
	i := strings.Index(mbox, "diff --git a/arch/x86/Kconfig b/arch/x86/Kconfig\n")
	if i < 0 {
		t.Fatal("no edit of arch/x86/Kconfig in v11")
	}
	h := i + strings.Index(mbox[i:], "\n@@ ") + 1
	ctx := h + strings.Index(mbox[h:], "\n ") + 1 // the hunk's first context line
	mbox = mbox[:ctx] + " XXX" + mbox[ctx+1:]
	patch := strings.Count(mbox[:ctx], "\nSubject: [PATCH v11 ") - 1 // less the cover letter
	path := filepath.Join(t.TempDir(), "v11.mbox")
	if err := os.WriteFile(path, []byte(mbox), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadMail(path, tree)
	if err != nil {
		t.Fatal(err)
	}
	got := only(Run(s, Options{}), "PATCH_APPLY")
	hunkLine := 1 + strings.Count(mbox[:h], "\n")
	if len(got) == 0 || got[0].Patch != patch || got[0].Line != hunkLine || got[0].Severity != Error ||
		!strings.Contains(got[0].Message, "hunk 1 (@@ -") || !strings.Contains(got[0].Message, "of arch/x86/Kconfig does not apply to v6.12 (") {
		t.Fatalf("PATCH_APPLY: %+v; want one at patch %d line %d", got, patch, hunkLine)
	}
	for _, f := range got[1:] {
		if f.Patch <= patch || !strings.Contains(f.Message, "of arch/x86/Kconfig does not apply to v6.12") {
			t.Errorf("PATCH_APPLY not caused by the broken hunk: %+v", f)
		}
	}
}
