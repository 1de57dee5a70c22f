package outdir

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const nFiles = 14

// fileChanges is a change of the 14 files of a spec copy's revision to
// contents marked with tag.
func fileChanges(tag string) []Change {
	var cs []Change
	for i := 1; i <= nFiles; i++ {
		cs = append(cs, Change{Path: fmt.Sprintf("v12/%02d-p.patch", i), Data: []byte(fmt.Sprintf("patch %d %s\n", i, tag))})
	}
	return cs
}

func writeFiles(t *testing.T, dir, tag string) {
	t.Helper()
	for _, c := range fileChanges(tag) {
		p := filepath.Join(dir, c.Path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, c.Data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
}

// fileTags returns, for each of the 14 files, the tag its content has,
// and the names of the other entries of v12 and dir.
func fileTags(t *testing.T, dir string) (map[string]int, []string) {
	t.Helper()
	tags := map[string]int{}
	var other []string
	for _, d := range []string{dir, filepath.Join(dir, "v12")} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			b, _ := os.ReadFile(filepath.Join(d, e.Name()))
			if f := strings.Fields(string(b)); strings.HasSuffix(e.Name(), "-p.patch") && len(f) == 3 {
				tags[f[2]]++
			} else {
				other = append(other, e.Name())
			}
		}
	}
	return tags, other
}

func TestReplaceFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "old")
	if err := ReplaceFiles(dir, fileChanges("new")); err != nil {
		t.Fatal(err)
	}
	if tags, other := fileTags(t, dir); tags["new"] != nFiles || len(other) != 0 {
		t.Errorf("after the change: %v, other files %v", tags, other)
	}
	if st, _ := os.Stat(filepath.Join(dir, "v12/01-p.patch")); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's 0640", st.Mode().Perm())
	}
	for _, bad := range []string{"../x", "/etc/passwd", "."} {
		if err := ReplaceFiles(dir, []Change{{Path: bad}}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestReplaceFilesFailure: a failure before the commit point changes
// nothing and leaves no temporary file.
func TestReplaceFilesFailure(t *testing.T) {
	for _, at := range []string{"file 1", "file 7", "file 14", "journal"} {
		dir := t.TempDir()
		writeFiles(t, dir, "old")
		undo := setHooks(func(name string) error {
			if name == at {
				return errors.New("disk full")
			}
			return nil
		}, false)
		err := ReplaceFiles(dir, fileChanges("new"))
		undo()
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: %v", at, err)
		}
		if tags, other := fileTags(t, dir); tags["old"] != nFiles || len(other) != 0 {
			t.Errorf("%s: after the failure: %v, other files %v", at, tags, other)
		}
	}
}

// TestReplaceFilesKill SIGKILLs ReplaceFiles in a child process at each
// step: the files are all old or, once Recover has run (as the next run
// does first), all new when the kill came after the commit point; no
// temporary file is left.
func TestReplaceFilesKill(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		at   string
		want string
	}{
		{"file 7", "old"}, {"journal", "old"}, {"committed", "new"}, {"renamed 7", "new"}, {"renamed 14", "new"},
	} {
		dir := t.TempDir()
		writeFiles(t, dir, "old")
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "OUTDIR_TEST_STOP="+tt.at, "OUTDIR_TEST_FILES="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "stopped at "+tt.at+"\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child said %q", line)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		before, _ := fileTags(t, dir)
		did, err := Recover(dir)
		if err != nil || !did {
			t.Errorf("%s: Recover: %v, %v (the killed run left nothing?)", tt.at, did, err)
		}
		if tags, other := fileTags(t, dir); tags[tt.want] != nFiles || len(other) != 0 {
			t.Errorf("killed at %s (files then %v): after Recover %v, other files %v; want all %s", tt.at, before, tags, other, tt.want)
		}
		if err := ReplaceFiles(dir, fileChanges("third")); err != nil {
			t.Fatal(err)
		}
		if tags, _ := fileTags(t, dir); tags["third"] != nFiles {
			t.Errorf("%s: the next change: %v", tt.at, tags)
		}
	}
}

// TestWriteWaitsForLock: Write waits for another run writing beside DIR,
// says so once, and gives up when its context ends, DIR untouched.
func TestWriteWaitsForLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	writeOld(t, dir)
	unlock, err := Lock(context.Background(), filepath.Dir(dir), nil, "the test")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var said strings.Builder
	_, err = Write(dir, newSeries, Options{Context: ctx, Wait: &said})
	if !errors.Is(err, context.DeadlineExceeded) || strings.Count(said.String(), "waiting for another kpatch run") != 1 {
		t.Errorf("Write: %v, said %q", err, said.String())
	}
	if got := contents(t, dir); !same(got, asMap(oldSeries)) {
		t.Errorf("DIR changed: %v", keys(got))
	}
}
