package mail_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/mail"
)

// TestLoadAllAsGitAm: what LoadAll takes of a series is what the real
// git am applies, going on with --skip where it stops.
//
// A reply whose body carries the only diff of its change ("Re: [PATCH]
// x: add c") is a patch: git am applies it (it was dropped without a
// word). A file of a directory with no mail headers, and a patch whose
// hunk miscounts its lines, are each one Unreadable at its place, git am
// stops there, and the rest is read (the series was refused whole).
func TestLoadAllAsGitAm(t *testing.T) {
	repo := gitSeries(t)
	src := filepath.Join(t.TempDir(), "src")
	gittest.Run(t, repo, "format-patch", "-q", "--no-numbered", "-o", src, "base..master")
	files := filesIn(t, src)
	read := func(f string) string {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("reply carrying a patch", func(t *testing.T) {
		dir := t.TempDir()
		for i, f := range files[:2] {
			text := read(f)
			if i == 1 {
				text = strings.Replace(text, "Subject: [PATCH] ", "Subject: Re: [PATCH] ", 1)
			}
			os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(text), 0o644)
		}
		want := gitAm(t, repo, filesIn(t, dir)...)
		s, bad, err := mail.LoadAll(dir)
		if err != nil || len(bad) != 0 {
			t.Fatalf("LoadAll: %v %v", err, bad)
		}
		if len(s.Patches) != len(want) {
			t.Fatalf("%d patches, git am applied %d", len(s.Patches), len(want))
		}
		for i, p := range s.Patches {
			if got := strings.TrimRight(p.CommitMessage(), "\n"); got != want[i].message {
				t.Errorf("patch %d: %q, git am %q", i+1, got, want[i].message)
			}
		}
	})

	t.Run("unreadable mails skipped", func(t *testing.T) {
		dir := t.TempDir()
		for i, f := range files {
			text := read(f)
			switch i {
			case 1: // no mail headers: the body and diff alone
				_, body, _ := strings.Cut(text, "\n\n")
				text = body
			case 2: // a hunk that says it has more lines than it has
				text = strings.Replace(text, "@@ -1,3 +1,2 @@", "@@ -1,5 +1,2 @@", 1)
			}
			os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(text), 0o644)
		}
		if _, err := mail.Load(dir); err == nil {
			t.Fatal("Load takes the damaged series: the test damages nothing")
		}
		s, bad, err := mail.LoadAll(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(bad) != 2 || bad[0].Position != 2 || bad[1].Position != 3 || filepath.Base(bad[1].File) != filepath.Base(files[2]) {
			t.Errorf("unreadable %+v, want the mails at 2 and 3", bad)
		}
		var nums []int
		for _, p := range s.Patches {
			nums = append(nums, p.Number)
		}
		if len(nums) != 2 || nums[0] != 1 || nums[1] != 4 {
			t.Errorf("patches at %v, want 1 and 4 (their places in the series)", nums)
		}
		// git am stops at the second mail as LoadAll does
		gittest.Run(t, repo, "checkout", "-q", "-B", "am", "base")
		defer gittest.Run(t, repo, "checkout", "-q", "master")
		defer exec.Command("git", "-C", repo, "am", "--abort").Run()
		am := exec.Command("git", "am", "-q", filesIn(t, dir)[0], filesIn(t, dir)[1])
		am.Dir, am.Env = repo, gittest.Environ(repo)
		if out, err := am.CombinedOutput(); err == nil {
			t.Errorf("git am took the mail without headers: %s", out)
		}
	})
}

// TestPlainSectionInGitPatch: a section of diff -u's form ("--- /dev/null",
// "+++ b/new.h") inside a patch of git's form creates new.h, as the real
// git am applies it with -p1; it was read as b/new.h.
func TestPlainSectionInGitPatch(t *testing.T) {
	repo := gitSeries(t)
	src := filepath.Join(t.TempDir(), "src")
	gittest.Run(t, repo, "format-patch", "-q", "--no-numbered", "-o", src, "base..master")
	f := filesIn(t, src)[0]
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.LastIndex(text, "\n-- \n")
	text = text[:i+1] + "--- /dev/null\n+++ b/plain.h\n@@ -0,0 +1 @@\n+#define PLAIN 1\n" + text[i+1:]
	dir := t.TempDir()
	one := filepath.Join(dir, "0001.patch")
	os.WriteFile(one, []byte(text), 0o644)
	gitAm(t, repo, one)
	if out := gittest.Run(t, repo, "ls-tree", "--name-only", "am"); !strings.Contains(string(out), "plain.h") {
		t.Fatalf("git am did not create plain.h: %s", out)
	}
	s, err := mail.Load(one)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fl := range s.Patches[0].Files {
		names = append(names, fl.NewName)
	}
	if len(names) != 2 || names[1] != "plain.h" {
		t.Errorf("files %q, want a.c and plain.h as git am applies them", names)
	}
}
