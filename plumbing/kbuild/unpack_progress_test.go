package kbuild

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/progress"
)

// TestUnpackBaseProgress unpacks a commit of a real git repository with a
// log: lines saying how many MB of how many are unpacked, ending with one
// that says it is done; the estimate of the total is within a tenth of
// what git archive writes.
func TestUnpackBaseProgress(t *testing.T) {
	gittest.Require(t)
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	for i := range 40 {
		p := filepath.Join(repo, "dir", strings.Repeat("f", i%7+1)+string(rune('a'+i%26))+".c")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte("int x;\n"), 4000*(i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Run(t, repo, "add", ".")
	gittest.Run(t, repo, "commit", "-q", "-m", "base")
	old := progress.LogEvery
	progress.LogEvery = 0 // a line for every read
	defer func() { progress.LogEvery = old }()
	var log bytes.Buffer
	d := NewDir(t.TempDir())
	d.Log = &log
	commit, err := d.UnpackBase(context.Background(), repo, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "unpacking "+commit[:12]+" into "+d.Src+": ") ||
		!strings.Contains(lines[0], " MB of ") || !strings.HasSuffix(lines[len(lines)-1], "s") ||
		!strings.Contains(lines[len(lines)-1], " done in ") {
		t.Errorf("progress:\n%s", log.String())
	}
	archive := gittest.Run(t, repo, "archive", "--format=tar", commit)
	if est := archiveSize(context.Background(), repo, commit); est < int64(len(archive))*9/10 || est > int64(len(archive))*11/10 {
		t.Errorf("estimated %d bytes, git archive wrote %d", est, len(archive))
	}
	if _, err := os.Stat(filepath.Join(d.Src, "dir", "fa.c")); err != nil {
		t.Error(err)
	}
}
