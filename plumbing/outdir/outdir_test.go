package outdir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// series returns a series of n patches and a cover letter whose texts all
// say tag, so that two series are told apart file by file.
func series(tag string, n int) []File {
	files := []File{{Name: "v11-0000-cover-letter.patch", Text: tag + " cover\n"}}
	for i := 1; i <= n; i++ {
		files = append(files, File{Name: fmt.Sprintf("v11-%04d-patch-%d.patch", i, i), Text: fmt.Sprintf("%s patch %d\n", tag, i)})
	}
	return files
}

// contents reads a directory tree into name → text ("-> target" for a
// symbolic link, "/" for a directory).
func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.Walk(dir, func(p string, st os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case rel == ".":
		case st.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			m[rel] = "-> " + l
		case st.IsDir():
			m[rel] = "/"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func asMap(files []File) map[string]string {
	m := map[string]string{}
	for _, f := range files {
		m[f.Name] = f.Text
	}
	return m
}

func same(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// temps lists what kpatch left beside dir: temporary directories.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".kpatch-") {
			out = append(out, e.Name())
		}
	}
	return out
}

var (
	oldSeries = series("old", 15)
	newSeries = series("new", 14)
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) // what is there before
		opt     Options
		wantErr error             // nil: success
		errText string            // part of the one-line error
		want    map[string]string // the directory afterwards; nil: newSeries
	}{
		{"fresh directory with missing parents", func(t *testing.T, dir string) { os.Remove(filepath.Dir(dir)) }, Options{}, nil, "", nil},
		{"empty directory", func(t *testing.T, dir string) { os.Mkdir(dir, 0o755) }, Options{}, nil, "", nil},
		{"previous series with one patch more", writeOld, Options{}, nil, "", nil},
		{"temporary files of an older kpatch", func(t *testing.T, dir string) {
			writeOld(t, dir)
			os.WriteFile(filepath.Join(dir, ".kpatch-123.tmp"), []byte("half"), 0o644)
		}, Options{}, nil, "", nil},
		{"directories of killed runs beside", func(t *testing.T, dir string) {
			writeOld(t, dir)
			for _, n := range []string{".out.kpatch-new-1", ".out.kpatch-old-2"} {
				os.MkdirAll(filepath.Join(filepath.Dir(dir), n, "x"), 0o755)
			}
		}, Options{}, nil, "", nil},
		{"old series left aside by a killed run", func(t *testing.T, dir string) {
			writeOld(t, dir)
			os.Rename(dir, filepath.Join(filepath.Dir(dir), ".out.kpatch-old-77"))
		}, Options{}, nil, "", nil},
		{"a file that is not a series file", func(t *testing.T, dir string) {
			writeOld(t, dir)
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine\n"), 0o644)
		}, Options{}, ErrForeign, "(notes.txt): move them away, give another -o, or --force", withOld(map[string]string{"notes.txt": "mine\n"})},
		{"several such files", func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
			os.WriteFile(filepath.Join(dir, "0001-other.patch"), []byte("x"), 0o644)
		}, Options{}, ErrForeign, "(0001-other.patch and 1 more)", map[string]string{"sub": "/", "0001-other.patch": "x"}},
		{"a directory named like a patch", func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Join(dir, "v11-0007-x.patch", "y"), 0o755)
		}, Options{}, ErrForeign, "(v11-0007-x.patch)", map[string]string{"v11-0007-x.patch": "/", "v11-0007-x.patch/y": "/"}},
		{"other files kept when asked", func(t *testing.T, dir string) {
			writeOld(t, dir)
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine\n"), 0o600)
			os.MkdirAll(filepath.Join(dir, "drafts"), 0o755)
			os.WriteFile(filepath.Join(dir, "drafts", "a"), []byte("a\n"), 0o644)
			os.Symlink("../elsewhere", filepath.Join(dir, "link"))
		}, Options{Keep: true}, nil, "", withNew(map[string]string{"notes.txt": "mine\n", "drafts": "/", "drafts/a": "a\n", "link": "-> ../elsewhere"})},
		{"the working directory", func(t *testing.T, dir string) {
			writeOld(t, dir)
			t.Chdir(dir)
		}, Options{Keep: true}, ErrCannotReplace, "the working directory or one of its parents cannot be replaced: give a new directory", asMap(oldSeries)},
		{"a parent of the working directory", func(t *testing.T, dir string) {
			writeOld(t, dir)
			os.Mkdir(filepath.Join(dir, "sub"), 0o755)
			t.Chdir(filepath.Join(dir, "sub"))
		}, Options{Keep: true}, ErrCannotReplace, "the working directory or one of its parents cannot be replaced", withOld(map[string]string{"sub": "/"})},
		{"kept entry named like a new patch", func(t *testing.T, dir string) {
			writeOld(t, dir)
			os.Remove(filepath.Join(dir, newSeries[7].Name))
			os.MkdirAll(filepath.Join(dir, newSeries[7].Name, "y"), 0o755)
		}, Options{Keep: true}, ErrInTheWay, newSeries[7].Name + " is in the way of the new series (it is not a file kpatch wrote, and the series has a file of that name): move it away",
			withOld(map[string]string{newSeries[7].Name: "/", newSeries[7].Name + "/y": "/"})},
		{"a regular file", func(t *testing.T, dir string) { os.WriteFile(dir, []byte("a file\n"), 0o644) }, Options{}, ErrNotDir, "not a directory: give a directory, or a path that does not exist yet", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p", "out")
			os.MkdirAll(filepath.Dir(dir), 0o755)
			tt.setup(t, dir)
			checkErr := Check(dir, tt.opt)
			names, err := Write(dir, newSeries, tt.opt)
			checkWant := tt.wantErr // Check does not know the new series' names
			if checkWant == ErrInTheWay {
				checkWant = nil
			}
			if !errors.Is(err, tt.wantErr) || !errors.Is(checkErr, checkWant) {
				t.Fatalf("Write: %v, Check: %v; want %v", err, checkErr, tt.wantErr)
			}
			want := tt.want
			if want == nil {
				want = asMap(newSeries)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.errText) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "-o "+dir) {
					t.Errorf("error %q: want one line starting with -o %s and holding %q", err, dir, tt.errText)
				}
				if tt.wantErr == ErrNotDir {
					if b, _ := os.ReadFile(dir); string(b) != "a file\n" {
						t.Errorf("the file -o names was changed")
					}
					return
				}
			} else if len(names) != len(newSeries) || names[3] != filepath.Join(dir, newSeries[3].Name) {
				t.Errorf("names %v", names)
			}
			if got := contents(t, dir); !same(got, want) {
				t.Errorf("directory holds %v, want %v", keys(got), keys(want))
			}
			if tmp := temps(t, dir); len(tmp) > 0 {
				t.Errorf("left %v beside the directory", tmp)
			}
		})
	}
}

func writeOld(t *testing.T, dir string) {
	t.Helper()
	if _, err := Write(dir, oldSeries, Options{}); err != nil {
		t.Fatal(err)
	}
}

func withOld(extra map[string]string) map[string]string {
	m := asMap(oldSeries)
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func withNew(extra map[string]string) map[string]string {
	m := asMap(newSeries)
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// TestWriteFailure injects a failure at every step of Write, with and
// without RENAME_EXCHANGE: the error says what failed, the directory holds
// the previous series exactly, and nothing is left beside it.
func TestWriteFailure(t *testing.T) {
	boom := errors.New("injected failure")
	tests := []struct {
		at       string // the step that fails
		fallback bool   // without RENAME_EXCHANGE
		nth      int    // fail the nth time the step is reached (0: first)
	}{
		{"file 1", false, 0},
		{"file 7", false, 0},
		{"file 15", false, 0},
		{"swap", false, 0},
		{"exchange", false, 0},
		{"file 7", true, 0},
		{"swap", true, 0},
		{"rename", true, 0}, // the old series cannot be renamed aside
		{"aside", true, 0},
		{"rename", true, 1}, // the new series cannot be renamed in: the old one is put back
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s#%d fallback=%v", tt.at, tt.nth, tt.fallback), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			writeOld(t, dir)
			seen := 0
			failAt := func(name string) error {
				if name == tt.at {
					seen++
					if seen == tt.nth+1 {
						return boom
					}
				}
				return nil
			}
			defer setHooks(failAt, tt.fallback)()
			_, err := Write(dir, newSeries, Options{})
			if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "-o "+dir+": ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Write: %v, want the injected failure in one line", err)
			}
			if got := contents(t, dir); !same(got, asMap(oldSeries)) {
				t.Errorf("directory holds %v, want the previous series", keys(got))
			}
			if tmp := temps(t, dir); len(tmp) > 0 {
				t.Errorf("left %v beside the directory", tmp)
			}
		})
	}
}

// setHooks makes step fail as f says (the step "exchange" stands for the
// swap itself) and, with fallback, makes RENAME_EXCHANGE unsupported. It
// returns the undo.
func setHooks(f func(string) error, fallback bool) func() {
	oldStep, oldExchange := step, exchange
	step = f
	exchange = func(a, b string) error {
		if fallback {
			return errExchangeUnsupported
		}
		if err := f("exchange"); err != nil {
			return err
		}
		return exchangeDirs(a, b)
	}
	return func() { step, exchange = oldStep, oldExchange }
}

// The child side of TestKill: Write stops at step $OUTDIR_TEST_STOP, says
// so on stdout and waits to be killed.
func TestMain(m *testing.M) {
	if at := os.Getenv("OUTDIR_TEST_STOP"); at != "" {
		setHooks(func(name string) error {
			if name == at {
				fmt.Println("stopped at", name)
				select {}
			}
			return nil
		}, os.Getenv("OUTDIR_TEST_FALLBACK") != "")
		var err error
		if d := os.Getenv("OUTDIR_TEST_FILES"); d != "" {
			err = ReplaceFiles(d, fileChanges("new"))
		} else {
			_, err = Write(os.Getenv("OUTDIR_TEST_DIR"), newSeries, Options{})
		}
		fmt.Println("not stopped:", err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// TestKill runs Write in a child process (this test binary), SIGKILLs it at
// each step, and checks that the directory holds the previous or the new
// series, never a mix, and that the next run clears what the killed one
// left. Without RENAME_EXCHANGE a kill between the two renames leaves the
// directory missing with the old series aside; the next run puts it back
// first.
func TestKill(t *testing.T) {
	tests := []struct {
		at       string
		fallback bool
		want     string // "old", "new" or "aside"
	}{
		{"file 1", false, "old"},
		{"file 7", false, "old"},
		{"swap", false, "old"},
		{"swapped", false, "new"},
		{"file 7", true, "old"},
		{"aside", true, "aside"},
		{"swapped", true, "new"},
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s fallback=%v", tt.at, tt.fallback), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			writeOld(t, dir)
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), "OUTDIR_TEST_STOP="+tt.at, "OUTDIR_TEST_DIR="+dir)
			if tt.fallback {
				cmd.Env = append(cmd.Env, "OUTDIR_TEST_FALLBACK=1")
			}
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
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			switch tt.want {
			case "old":
				if got := contents(t, dir); !same(got, asMap(oldSeries)) {
					t.Errorf("after the kill the directory holds %v, want the previous series", keys(got))
				}
			case "new":
				if got := contents(t, dir); !same(got, asMap(newSeries)) {
					t.Errorf("after the kill the directory holds %v, want the new series", keys(got))
				}
			case "aside":
				if _, err := os.Stat(dir); err == nil {
					t.Errorf("the directory exists; want it renamed aside")
				}
			}
			if len(temps(t, dir)) == 0 {
				t.Errorf("the killed run left nothing beside the directory: the kill came too late")
			}
			third := series("third", 13)
			if _, err := Write(dir, third, Options{}); err != nil {
				t.Fatalf("the next run: %v", err)
			}
			if got := contents(t, dir); !same(got, asMap(third)) {
				t.Errorf("the next run left %v", keys(got))
			}
			if tmp := temps(t, dir); len(tmp) > 0 {
				t.Errorf("the next run left %v beside the directory", tmp)
			}
		})
	}
}

// TestWriteSymlink: when -o is a symbolic link to a directory, the link
// stays and the directory it points to gets the new series.
func TestWriteSymlink(t *testing.T) {
	base := t.TempDir()
	real, link := filepath.Join(base, "real"), filepath.Join(base, "out")
	writeOld(t, real)
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	names, err := Write(link, newSeries, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if names[0] != filepath.Join(link, newSeries[0].Name) {
		t.Errorf("names[0] = %s", names[0])
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("-o is no longer a symbolic link: %v", err)
	}
	if got := contents(t, real); !same(got, asMap(newSeries)) {
		t.Errorf("the link's target holds %v", keys(got))
	}
	if tmp := temps(t, real); len(tmp) > 0 {
		t.Errorf("left %v", tmp)
	}
}

// TestWriteKeepsMode: the new directory has the old one's permissions.
func TestWriteKeepsMode(t *testing.T) {
	for _, perm := range []os.FileMode{0o700, 0o750, 0o755} {
		dir := filepath.Join(t.TempDir(), "out")
		writeOld(t, dir)
		os.Chmod(dir, perm)
		if _, err := Write(dir, newSeries, Options{}); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != perm {
			t.Errorf("mode %v after replacing a %v directory (%v)", st.Mode().Perm(), perm, err)
		}
	}
}

// BenchmarkWrite replaces a 15-file series of 10 KiB messages (the size of
// the v11 patches) in a directory that holds the previous one: the files
// are written and fsynced in a new directory, which is swapped in.
func BenchmarkWrite(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "out")
	files := series("bench", 14)
	for i := range files {
		files[i].Text = strings.Repeat(files[i].Text, 10240/len(files[i].Text))
	}
	if _, err := Write(dir, files, Options{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Write(dir, files, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteConcurrent runs four writers into one directory at once: the
// lock on the parent serializes them, every Write succeeds, and the
// directory ends up holding one of the series whole.
func TestWriteConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	all := [][]File{series("a", 14), series("b", 13), series("c", 15), series("d", 12)}
	errs := make(chan error, len(all)*5)
	for _, s := range all {
		go func() {
			for i := 0; i < 5; i++ {
				_, err := Write(dir, s, Options{})
				errs <- err
			}
		}()
	}
	for i := 0; i < len(all)*5; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	got := contents(t, dir)
	whole := false
	for _, s := range all {
		whole = whole || same(got, asMap(s))
	}
	if !whole {
		t.Errorf("the directory holds %v, not one series whole", keys(got))
	}
	if tmp := temps(t, dir); len(tmp) > 0 {
		t.Errorf("left %v", tmp)
	}
}
