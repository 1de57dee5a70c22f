package mail

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyCommitMail reads what real git format-patch --always writes for
// a commit that changes nothing (a fix the base has already): a patch with
// its message and signature and no diff, as git am --empty=keep records
// it. The same mail cut short (no signature) stays an error.
func TestEmptyCommitMail(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: install it")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=A U Thor", "-c", "user.email=a@example.org"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a")
	git("commit", "-qm", "base")
	git("commit", "-q", "--allow-empty", "-m", "task_work: Fix NMI race condition", "-m", "The base has it.\n\nSigned-off-by: A U Thor <a@example.org>")
	git("format-patch", "-q", "--always", "-1", "-o", "out")
	names, _ := filepath.Glob(filepath.Join(dir, "out", "*.patch"))
	if len(names) != 1 {
		t.Fatalf("git wrote %v", names)
	}
	full, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(full), "\n---\n") {
		t.Fatalf("git wrote a \"---\" line for an empty commit:\n%s", full)
	}
	tests := []struct {
		name    string
		text    string
		wantErr string
	}{
		{name: "as git writes it", text: string(full)},
		{name: "cut short", text: string(full[:strings.Index(string(full), "\n-- \n")+1]), wantErr: `no "---" line`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "0001-x.patch")
			if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Load(p)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Patches) != 1 {
				t.Fatalf("%d patches", len(s.Patches))
			}
			got := s.Patches[0]
			if got.Title != "task_work: Fix NMI race condition" || got.Log != "The base has it.\n\nSigned-off-by: A U Thor <a@example.org>\n" ||
				got.Diff != "" || len(got.Files) != 0 || got.Signature == "" || got.Author != "A U Thor <a@example.org>" {
				t.Errorf("read %q by %q, log %q, diff %q, %d files, signature %q", got.Title, got.Author, got.Log, got.Diff, len(got.Files), got.Signature)
			}
		})
	}
}
