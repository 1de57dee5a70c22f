package mail_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/internal/gittest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/mail"
)

// quiltForms rewrites the patches git format-patch wrote of gitSeries
// (numbered, one file each) the ways quilt-maintained trees carry them:
// the diff part replaced by what GNU diff -u writes for the same change
// (no "diff --git" or "index" lines; a new file against /dev/null), with
// the "---" separator and diffstat kept, without them (the message runs
// into "--- a/file"), and with quilt's "Index:" header lines. It returns
// a directory per form.
func quiltForms(t *testing.T, repo string) map[string]string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "git")
	gittest.Run(t, repo, "format-patch", "-q", "-o", src, "base..master")
	revs := strings.Fields(string(gittest.Run(t, repo, "rev-list", "--reverse", "base..master")))
	forms := map[string]string{}
	for _, form := range []string{"separator", "no-separator", "index"} {
		forms[form] = filepath.Join(t.TempDir(), form)
		os.MkdirAll(forms[form], 0o755)
	}
	for i, f := range filesIn(t, src) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		name := strings.TrimSpace(string(gittest.Run(t, repo, "diff-tree", "--no-commit-id", "--name-only", "-r", revs[i])))
		dir := t.TempDir()
		oldPath, newPath := filepath.Join(dir, "old"), filepath.Join(dir, "new")
		oldLabel := "a/" + name
		if old, err := exec.Command("git", "-C", repo, "show", revs[i]+"^:"+name).Output(); err == nil {
			os.WriteFile(oldPath, old, 0o644)
		} else {
			oldPath, oldLabel = "/dev/null", "/dev/null"
		}
		os.WriteFile(newPath, gittest.Run(t, repo, "show", revs[i]+":"+name), 0o644)
		cmd := exec.Command("diff", "-u", "--label", oldLabel, "--label", "b/"+name, oldPath, newPath)
		udiff, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
			t.Fatalf("diff: %v", err)
		}
		gitDiff := text[strings.Index(text, "diff --git "):strings.LastIndex(text, "-- \n")]
		quilt := strings.Replace(text, gitDiff, string(udiff), 1)
		sep := strings.Index(quilt, "\n---\n")
		noSep := quilt[:sep+1] + "\n" + quilt[strings.Index(quilt, "--- "+oldLabel):]
		index := strings.Replace(quilt, "--- "+oldLabel, "Index: "+name+"\n"+strings.Repeat("=", 67)+"\n--- "+oldLabel, 1)
		for form, content := range map[string]string{"separator": quilt, "no-separator": noSep, "index": index} {
			if strings.Contains(content, "diff --git") {
				t.Fatalf("%s still has git's header", form)
			}
			if err := os.WriteFile(filepath.Join(forms[form], filepath.Base(f)), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return forms
}

// TestReadsQuiltPatches: patches whose diffs have no "diff --git" lines
// (as quilt and diff -u write them) are read as the real git am reads and
// applies them: the commit message and author git am records, and each
// file's change, applied to the file before it, gives the content git am
// committed.
func TestReadsQuiltPatches(t *testing.T) {
	repo := gitSeries(t)
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("GNU diff not installed (apt-get install diffutils)")
	}
	for form, dir := range quiltForms(t, repo) {
		t.Run(form, func(t *testing.T) {
			files := filesIn(t, dir)
			want := gitAm(t, repo, files...)
			// git am applied them as the commits they were made from
			gittest.Run(t, repo, "diff", "--quiet", "master", "am")
			s, err := mail.Load(dir)
			if err != nil {
				t.Fatalf("git am takes it, kpatch refuses it: %v", err)
			}
			if len(s.Patches) != len(want) {
				t.Fatalf("%d patches read, git am applied %d", len(s.Patches), len(want))
			}
			revs := strings.Fields(string(gittest.Run(t, repo, "rev-list", "--reverse", "base..master")))
			for i, p := range s.Patches {
				got := amRecord{strings.TrimRight(p.CommitMessage(), "\n"), p.Author}
				if got != want[i] {
					t.Errorf("patch %d:\n got %q\nwant %q (git am)", i+1, got, want[i])
				}
				if len(p.Files) != 1 {
					t.Fatalf("patch %d: %d files", i+1, len(p.Files))
				}
				f := p.Files[0]
				name := strings.TrimSpace(string(gittest.Run(t, repo, "diff-tree", "--no-commit-id", "--name-only", "-r", revs[i])))
				if f.NewName != name {
					t.Errorf("patch %d: file %q, want %q", i+1, f.NewName, name)
				}
				old, err := exec.Command("git", "-C", repo, "show", revs[i]+"^:"+name).Output()
				if (err != nil) != f.IsNew {
					t.Errorf("patch %d: new file %v, but git has it before: %v", i+1, f.IsNew, err == nil)
				}
				var out bytes.Buffer
				if err := gitdiff.Apply(&out, bytes.NewReader(old), f); err != nil {
					t.Fatalf("patch %d: %v", i+1, err)
				}
				if committed := gittest.Run(t, repo, "show", revs[i]+":"+name); !bytes.Equal(out.Bytes(), committed) {
					t.Errorf("patch %d: applied %q, git has %q", i+1, out.String(), committed)
				}
			}
		})
	}
}

// TestReadsRealQuilt: patches the real quilt refreshes (its default form,
// "Index:" lines and names under the tree's directory, and the form of
// "quilt refresh -p ab --no-index", as OpenWrt keeps its kernel patches),
// with a mail header above the diff, are read as the real git am reads and
// applies them.
func TestReadsRealQuilt(t *testing.T) {
	testenv.Full(t, "quilt takes 5 s a patch here")
	if _, err := exec.LookPath("quilt"); err != nil {
		t.Skip("quilt is not installed (apt-get install quilt)")
	}
	gittest.Require(t)
	const header = "From: Ada Lovelace <ada@example.org>\nSubject: [PATCH] x: add b and new.h\n\nThe change, kept by quilt.\n\nSigned-off-by: Ada Lovelace <ada@example.org>\n---\n"
	for _, form := range [][]string{nil, {"-p", "ab", "--no-index"}} {
		t.Run(strings.Join(append([]string{"quilt refresh"}, form...), " "), func(t *testing.T) {
			repo := t.TempDir()
			gittest.Run(t, repo, "init", "-q", "-b", "master")
			os.WriteFile(filepath.Join(repo, "a.c"), []byte("int a;\n"), 0o644)
			gittest.Run(t, repo, "add", "a.c")
			gittest.Run(t, repo, "commit", "-q", "-m", "base")
			gittest.Run(t, repo, "tag", "base")
			work := filepath.Join(t.TempDir(), "linux")
			os.MkdirAll(work, 0o755)
			os.WriteFile(filepath.Join(work, "a.c"), []byte("int a;\n"), 0o644)
			quilt := func(args ...string) {
				t.Helper()
				cmd := exec.Command("quilt", args...)
				cmd.Dir, cmd.Env = work, append(os.Environ(), "QUILT_PATCHES=patches", "QUILTRC=/dev/null")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("quilt %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			quilt("new", "0001-x.patch")
			quilt("add", "a.c", "new.h")
			os.WriteFile(filepath.Join(work, "a.c"), []byte("int a;\nint b;\n"), 0o644)
			os.WriteFile(filepath.Join(work, "new.h"), []byte("#define NEW 1\n"), 0o644)
			quilt(append([]string{"refresh"}, form...)...)
			patch := filepath.Join(work, "patches", "0001-x.patch")
			body, err := os.ReadFile(patch)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(patch, append([]byte(header), body...), 0o644)
			quilt(append([]string{"refresh"}, form...)...) // quilt keeps the header
			if b, _ := os.ReadFile(patch); !strings.HasPrefix(string(b), header) || strings.Contains(string(b), "diff --git") {
				t.Fatalf("quilt wrote:\n%s", b)
			}
			want := gitAm(t, repo, patch)
			s, err := mail.Load(patch)
			if err != nil {
				t.Fatalf("git am takes it, kpatch refuses it: %v", err)
			}
			if len(s.Patches) != 1 || len(want) != 1 {
				t.Fatalf("%d patches read, git am applied %d", len(s.Patches), len(want))
			}
			p := s.Patches[0]
			if got := (amRecord{strings.TrimRight(p.CommitMessage(), "\n"), p.Author}); got != want[0] {
				t.Errorf("got %q\nwant %q (git am)", got, want[0])
			}
			if len(p.Files) != 2 {
				t.Fatalf("%d files", len(p.Files))
			}
			for _, f := range p.Files {
				old := []byte(nil)
				if !f.IsNew {
					old = gittest.Run(t, repo, "show", "base:"+f.OldName)
				}
				var out bytes.Buffer
				if err := gitdiff.Apply(&out, bytes.NewReader(old), f); err != nil {
					t.Fatalf("%s: %v", f.NewName, err)
				}
				if am := gittest.Run(t, repo, "show", "am:"+f.NewName); !bytes.Equal(out.Bytes(), am) {
					t.Errorf("%s: applied %q, git am committed %q", f.NewName, out.String(), am)
				}
			}
		})
	}
}

// TestReadsQuiltThreadGzip: the quilt forms of a series, as one mbox and
// as that mbox gzip-compressed (lore's t.mbox.gz, read as a saved
// thread), are read alike: the same patches with the same diffs. The
// compressed one panicked ("slice bounds out of range [-1:]"), looking
// for "diff --git" without checking it was found.
func TestReadsQuiltThreadGzip(t *testing.T) {
	repo := gitSeries(t)
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("GNU diff not installed (apt-get install diffutils)")
	}
	for form, dir := range quiltForms(t, repo) {
		t.Run(form, func(t *testing.T) {
			var mbox []byte
			for _, f := range filesIn(t, dir) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				mbox = append(mbox, data...)
			}
			plain := filepath.Join(t.TempDir(), "t.mbox")
			os.WriteFile(plain, mbox, 0o644)
			var gz bytes.Buffer
			w := gzip.NewWriter(&gz)
			w.Write(mbox)
			w.Close()
			packed := filepath.Join(t.TempDir(), "t.mbox.gz")
			os.WriteFile(packed, gz.Bytes(), 0o644)
			want, err := mail.Load(plain)
			if err != nil {
				t.Fatalf("plain mbox: %v", err)
			}
			got, err := mail.Load(packed)
			if err != nil {
				t.Fatalf("gzip mbox: %v", err)
			}
			if len(got.Patches) != len(want.Patches) {
				t.Fatalf("%d patches from the gzip mbox, %d from the plain one", len(got.Patches), len(want.Patches))
			}
			for i := range want.Patches {
				if g, w := got.Patches[i].Diff, want.Patches[i].Diff; g != w || g == "" {
					t.Errorf("patch %d: diff %q, plain mbox %q", i+1, g, w)
				}
			}
		})
	}
}
