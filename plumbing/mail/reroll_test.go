package mail

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRerollFilename: the names real git format-patch -v N gives, v1
// included, for subjects short and long (git shortens the name with the
// "vN-" prefix in it).
func TestRerollFilename(t *testing.T) {
	subjects := []string{
		"unwind: Shorten lines",
		"unwind: Make unwind_task_info::unwind_mask consistent",
		"entry,unwind/deferred: Fix unwind_reset_info() placement",
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=A", "-c", "user.email=a@example.org"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	for _, s := range subjects {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "f")
		git("commit", "-qm", s)
	}
	for _, v := range []int{1, 2, 16} {
		out := filepath.Join(dir, "out", "v"+strconv.Itoa(v))
		git("format-patch", "-q", "-v", strconv.Itoa(v), "-o", out, "--root", "HEAD")
		for i, s := range subjects {
			name := RerollFilename(v, i+1, s)
			if _, err := os.Stat(filepath.Join(out, name)); err != nil {
				got, _ := filepath.Glob(filepath.Join(out, "*"))
				t.Errorf("v%d patch %d: %s, git wrote %v", v, i+1, name, got)
			}
			if v > 1 && name != Filename(v, i+1, s) {
				t.Errorf("v%d: RerollFilename %s, Filename %s", v, name, Filename(v, i+1, s))
			}
		}
	}
}
