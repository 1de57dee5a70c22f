package mail_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/mail"
)

// TestImportRoundTrip imports series as kpatch series import does (Load,
// then WriteDir) and compares the files written with git's, byte for
// byte, file names included:
//   - the mails of git format-patch --cover-letter --thread with To and
//     Cc, -v2, -v1 (file names "v1-...") or no version, on random
//     commits of real kernel files: written again as they were, the
//     cover letter's Message-Id, Date and recipients included, every
//     patch's In-Reply-To naming it;
//   - git format-patch's mails of commits whose messages git am cleans
//     (gittest.GenerateMessages), against what git format-patch writes
//     from the commits the real git am makes of them: what git am
//     records, written as git writes it.
//
// -kpatch.cases=N sets the number of commits of each.
func TestImportRoundTrip(t *testing.T) {
	n := gittest.CasesOr(20, 200)
	r := rand.New(rand.NewPCG(*gittest.Seed, 19))
	h := gittest.Generate(t, r, gittest.KernelSources(t, r, 8), []string{"one"}, n)
	for _, v := range []string{"-v2", "-v1", "--numbered"} {
		t.Run("format-patch --cover-letter "+v, func(t *testing.T) {
			posted := filepath.Join(t.TempDir(), "posted")
			gittest.Run(t, h.Dir, "format-patch", "-q", "--cover-letter", "--thread", v, "-o", posted,
				"--to=Ada Lovelace <ada@example.org>", "--cc=Jöhn Dœ <john@example.org>", "--cc=list@vger.kernel.org", "main..one")
			compareImport(t, posted, posted, n+1)
		})
	}
	t.Run("git am, then format-patch", func(t *testing.T) {
		r := rand.New(rand.NewPCG(*gittest.Seed, 23))
		h := gittest.GenerateMessages(t, r, gittest.KernelSources(t, r, 8), n)
		posted := filepath.Join(t.TempDir(), "posted")
		gittest.Run(t, h.Dir, "format-patch", "-q", "--zero-commit", "-o", posted, "main..one")
		mbox := filepath.Join(t.TempDir(), "posted.mbox")
		if err := os.WriteFile(mbox, gittest.Run(t, h.Dir, "format-patch", "--stdout", "main..one"), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, h.Dir, "checkout", "-q", "-b", "am", "main")
		cmd := exec.Command("git", "am", "-q", "--keep-cr", mbox)
		cmd.Dir, cmd.Env = h.Dir, gittest.Environ(h.Dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git am: %v\n%s", err, out)
		}
		again := filepath.Join(t.TempDir(), "again")
		gittest.Run(t, h.Dir, "format-patch", "-q", "--zero-commit", "-o", again, "main..am")
		compareImport(t, posted, again, n)
	})
}

// compareImport imports the series in the directory posted and compares
// the files it writes with those of the directory want, which holds files
// of them.
func compareImport(t *testing.T, posted, want string, files int) {
	t.Helper()
	s, err := mail.Load(posted)
	if err != nil {
		t.Fatalf("git am takes it, kpatch refuses it: %v", err)
	}
	out := filepath.Join(t.TempDir(), "imported")
	names, err := s.WriteDir(out)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(want)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != files || len(names) != files {
		t.Fatalf("git wrote %d files, import %d, want %d", len(ents), len(names), files)
	}
	differ := 0
	for i, e := range ents {
		w, err := os.ReadFile(filepath.Join(want, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		g, err := os.ReadFile(names[i])
		if err != nil || filepath.Base(names[i]) != e.Name() || string(g) != string(w) {
			differ++
			if differ <= 3 {
				t.Errorf("seed %d: import wrote %s, git %s (%v):\n%s", *gittest.Seed, filepath.Base(names[i]), e.Name(), err, lineDiff(string(g), string(w)))
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d files differ", differ, files)
	}
}

// lineDiff shows the first lines where got and want differ.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for i, shown := 0, 0; i < max(len(g), len(w)) && shown < 6; i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			fmt.Fprintf(&b, "line %d:\n  import %q\n  git    %q\n", i+1, gl, wl)
			shown++
		}
	}
	return b.String()
}
