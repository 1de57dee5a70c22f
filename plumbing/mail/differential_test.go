package mail_test

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/mail"
)

// TestReadDifferential compares what kpatch reads from git format-patch's
// mails with what the real git am records from them, on random commits
// of real kernel files whose messages are written as people write them
// (gittest.Message: in-body From, Subject and Date lines in any case and
// folded, "[PATCH]" title lines, ">From " lines, trailing white space,
// runs of blank lines, title-only commits): for every patch the commit
// message, the author and the author date, from the mbox and from the
// directory git format-patch writes. -kpatch.cases=N sets the number of
// commits.
func TestReadDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(*gittest.Seed, 17))
	n := gittest.CasesOr(60, 600)
	h := gittest.GenerateMessages(t, r, gittest.KernelSources(t, r, 8), n)
	mbox := filepath.Join(t.TempDir(), "series.mbox")
	if err := os.WriteFile(mbox, gittest.Run(t, h.Dir, "format-patch", "--stdout", "main..one"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "outgoing")
	gittest.Run(t, h.Dir, "format-patch", "-q", "-o", dir, "main..one")

	gittest.Run(t, h.Dir, "checkout", "-q", "-b", "am", "main")
	// --keep-cr: the diffs hold lines that end in a carriage return.
	cmd := exec.Command("git", "am", "-q", "--keep-cr", mbox)
	cmd.Dir, cmd.Env = h.Dir, gittest.Environ(h.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git am: %v\n%s", err, out)
	}
	log := string(gittest.Run(t, h.Dir, "log", "--reverse", "-z", "--format=%an%x00%ae%x00%aD%x00%B", "main..am"))
	f := strings.Split(log, "\x00")
	if len(f) != 4*n+1 {
		t.Fatalf("git am recorded %d fields, want 4 for each of %d commits", len(f)-1, n)
	}
	for _, in := range []string{mbox, dir} {
		s, err := mail.Load(in)
		if err != nil {
			t.Fatalf("%s: git am takes it, kpatch refuses it: %v", in, err)
		}
		if len(s.Patches) != n {
			t.Fatalf("%s: %d patches read, git am applied %d", in, len(s.Patches), n)
		}
		differ := 0
		for i, p := range s.Patches {
			name, addr, err := mail.ParseAddress(p.Author)
			got := [4]string{name, addr, p.AuthorDate, p.CommitMessage()}
			want := [4]string{f[4*i], f[4*i+1], f[4*i+2], f[4*i+3]}
			if err != nil || got != want {
				differ++
				if differ <= 5 {
					t.Errorf("seed %d, %s patch %d:\n got %q (%v)\nwant %q (git am)", *gittest.Seed, filepath.Base(in), i+1, got, err, want)
				}
			}
		}
		if differ > 0 {
			t.Errorf("%s: %d of %d patches differ from what git am records", filepath.Base(in), differ, n)
		}
	}
}
