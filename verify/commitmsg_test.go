package verify

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/internal/testenv"
)

// TestCommitMessageAsCheckpatch: COMMIT_MESSAGE warns exactly where the
// real checkpatch.pl does, on mails git format-patch writes: it counts
// the lines up to the first Signed-off-by, so a sign-off followed by a
// distribution's "Patchset:" trailer is no description (verify counted
// the trailer and said nothing).
func TestCommitMessageAsCheckpatch(t *testing.T) {
	perl := testenv.Tool(t, "perl", "perl")
	gittest.Require(t)
	tree := debianTree(t)
	for _, c := range []struct{ name, msg string }{
		{"sign-off, then Patchset", "Signed-off-by: A U Thor <author@example.org>\nPatchset: zram"},
		{"Patchset, then sign-off", "Patchset: zram\nSigned-off-by: A U Thor <author@example.org>"},
		{"sign-off alone", "Signed-off-by: A U Thor <author@example.org>"},
		{"a description", "Make it so.\n\nSigned-off-by: A U Thor <author@example.org>\nPatchset: zram"},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo := t.TempDir()
			gittest.Run(t, repo, "init", "-q")
			f := filepath.Join(repo, "kernel", "x.c")
			os.MkdirAll(filepath.Dir(f), 0o755)
			os.WriteFile(f, []byte("// SPDX-License-Identifier: GPL-2.0\nint x;\n"), 0o644)
			gittest.Run(t, repo, "add", ".")
			gittest.Run(t, repo, "commit", "-q", "-m", "base")
			os.WriteFile(f, []byte("// SPDX-License-Identifier: GPL-2.0\nint x;\nint y;\n"), 0o644)
			gittest.Run(t, repo, "commit", "-q", "-a", "--author", "A U Thor <author@example.org>", "-m", "kernel: add y\n\n"+c.msg)
			mail := gittest.Run(t, repo, "format-patch", "-1", "--stdout")
			cmd := exec.Command(perl, tree+"/scripts/checkpatch.pl", "--no-tree", "--terse", "--show-types", "--no-summary", "-")
			cmd.Stdin = strings.NewReader(string(mail))
			out, _ := cmd.Output()
			want := strings.Contains(string(out), "COMMIT_MESSAGE")
			p := filepath.Join(t.TempDir(), "x.mbox")
			os.WriteFile(p, mail, 0o644)
			s, err := ReadMail(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(only(Run(s, Options{}), "COMMIT_MESSAGE")) > 0; got != want {
				t.Errorf("COMMIT_MESSAGE %v, checkpatch.pl %v (%s)", got, want, strings.TrimSpace(string(out)))
			}
		})
	}
}
