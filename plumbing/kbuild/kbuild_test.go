package kbuild

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSyncRewritesOnlyChanges(t *testing.T) {
	root := t.TempDir()
	d := NewDir(root)
	base := map[string]string{"Kbuild": "obj-y += kernel/\n", "kernel/fork.c": "fork v1\n"}
	for p, c := range base {
		os.MkdirAll(filepath.Dir(filepath.Join(d.Src, p)), 0o755)
		os.WriteFile(filepath.Join(d.Src, p), []byte(c), 0o644)
	}
	baseFile := func(p string) ([]byte, bool, error) {
		c, ok := base[p]
		return []byte(c), ok, nil
	}
	old := time.Now().Add(-time.Hour)
	steps := []struct {
		name    string
		files   map[string]string
		changed []string
		want    map[string]string // expected content; "" means absent
	}{
		{
			name:    "first overlay",
			files:   map[string]string{"kernel/fork.c": "fork patched\n", "kernel/unwind/user.c": "new\n"},
			changed: []string{"kernel/fork.c", "kernel/unwind/user.c"},
			want:    map[string]string{"kernel/fork.c": "fork patched\n", "kernel/unwind/user.c": "new\n"},
		},
		{
			name:    "same again: nothing written",
			files:   map[string]string{"kernel/fork.c": "fork patched\n", "kernel/unwind/user.c": "new\n"},
			changed: nil,
		},
		{
			name:    "series drops both files",
			files:   map[string]string{"Kbuild": "obj-y += kernel/\nobj-y += kpatch_test/\n"},
			changed: []string{"Kbuild", "kernel/fork.c", "kernel/unwind/user.c"},
			want:    map[string]string{"kernel/fork.c": "fork v1\n", "kernel/unwind/user.c": "", "Kbuild": "obj-y += kernel/\nobj-y += kpatch_test/\n"},
		},
	}
	for _, st := range steps {
		// Age every file so that a rewrite shows in the mtime.
		filepath.Walk(d.Src, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				os.Chtimes(p, old, old)
			}
			return nil
		})
		files := map[string][]byte{}
		for p, c := range st.files {
			files[p] = []byte(c)
		}
		changed, err := d.Sync(files, baseFile)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if !reflect.DeepEqual(changed, st.changed) {
			t.Errorf("%s: changed %q, want %q", st.name, changed, st.changed)
		}
		for p := range st.files {
			fi, err := os.Stat(filepath.Join(d.Src, p))
			if err != nil {
				t.Fatal(err)
			}
			rewritten := fi.ModTime().After(old.Add(time.Minute))
			if rewritten != contains(st.changed, p) {
				t.Errorf("%s: %s rewritten=%v", st.name, p, rewritten)
			}
		}
		for p, c := range st.want {
			b, err := os.ReadFile(filepath.Join(d.Src, p))
			if c == "" {
				if err == nil {
					t.Errorf("%s: %s should be gone", st.name, p)
				}
				continue
			}
			if string(b) != c {
				t.Errorf("%s: %s = %q, want %q", st.name, p, b, c)
			}
		}
	}
	if _, err := d.Sync(map[string][]byte{"../escape": nil}, baseFile); err == nil {
		t.Error("Sync accepted a path outside the tree")
	}
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig(strings.NewReader("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x y\"\n# comment\nCONFIG_D=0x10\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "y", "B": "n", "C": `"x y"`, "D": "0x10"}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got %v, want %v", cfg, want)
	}
}

func TestCheckExplains(t *testing.T) {
	src := filepath.Join("testdata", "kconfig")
	tests := []struct {
		name string
		cfg  map[string]string
		want map[string]string
		why  []string // substrings of the problems, in order
	}{
		{
			name: "all there",
			cfg:  map[string]string{"UNWIND_USER": "y", "HAVE_UNWIND_USER_FP": "y", "IA32_EMULATION": "y"},
			want: map[string]string{"UNWIND_USER": "y", "HAVE_UNWIND_USER_FP": "y", "IA32_EMULATION": "y"},
		},
		{
			name: "no 64BIT: nothing selects the unwinder",
			cfg:  map[string]string{"X86_64": "n"},
			want: map[string]string{"HAVE_UNWIND_USER_FP": "y", "IA32_EMULATION": "y"},
			why: []string{
				"CONFIG_HAVE_UNWIND_USER_FP=absent, want y: defined in arch/Kconfig without a prompt (only a select can enable it); selected by X86 if X86_64 (arch/x86/Kconfig) [X86=n X86_64=n]",
				"CONFIG_IA32_EMULATION=absent, want y: defined in arch/x86/Kconfig; depends on X86_64 [X86_64=n]; nothing selects it",
			},
		},
		{
			name: "symbol the series does not add",
			cfg:  map[string]string{},
			want: map[string]string{"UNWIND_DEFERRED": "y"},
			why:  []string{"no Kconfig file defines it"},
		},
		{
			name: "wanted off and absent is fine",
			cfg:  map[string]string{},
			want: map[string]string{"UNWIND_USER": "n"},
		},
	}
	for _, tc := range tests {
		probs := Check(tc.cfg, tc.want, src)
		if len(probs) != len(tc.why) {
			t.Errorf("%s: %d problems %v, want %d", tc.name, len(probs), probs, len(tc.why))
			continue
		}
		for i, p := range probs {
			if !strings.Contains(p.String(), tc.why[i]) {
				t.Errorf("%s: problem %q\nwant it to contain %q", tc.name, p.String(), tc.why[i])
			}
		}
	}
}

func TestMakeProgressAndErrors(t *testing.T) {
	for _, tc := range []struct {
		dir       string
		steps     int
		errFile   string
		errLine   int
		errSubstr string
	}{
		{dir: "make-ok", steps: 5},
		{dir: "make-fail", steps: 3, errFile: "kernel/unwind/deferred.c", errLine: 42, errSubstr: "'foo' undeclared"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			src, _ := filepath.Abs(filepath.Join("testdata", tc.dir))
			d := &Dir{Root: t.TempDir(), Src: src, Obj: t.TempDir()}
			var seen []string
			var log bytes.Buffer
			err := d.Make(context.Background(), "x86_64", 2, func(done, total int, step string) {
				seen = append(seen, step)
			}, &log, "all")
			if len(seen) != tc.steps {
				t.Errorf("progress saw %d steps %q, want %d", len(seen), seen, tc.steps)
			}
			if tc.errFile == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var be *BuildError
			if !errors.As(err, &be) || len(be.Errors) != 1 {
				t.Fatalf("err = %v, want one compile error", err)
			}
			ce := be.Errors[0]
			if ce.File != tc.errFile || ce.Line != tc.errLine || !strings.Contains(ce.Message, tc.errSubstr) || len(ce.Context) != 2 {
				t.Errorf("compile error %+v", ce)
			}
			if !strings.Contains(log.String(), "Error 1") {
				t.Errorf("full output not logged: %s", log.String())
			}
		})
	}
}

func TestLineProgress(t *testing.T) {
	var b bytes.Buffer
	p := LineProgress(&b, 2)
	for i := 1; i <= 5; i++ {
		p(i, 5, "CC x.o")
	}
	if n := strings.Count(b.String(), "\n"); n != 3 { // steps 1, 2, 4
		t.Errorf("%d lines, want 3:\n%s", n, b.String())
	}
	if !strings.Contains(b.String(), "[   4/5] CC x.o") {
		t.Errorf("no counter in %q", b.String())
	}
}

// A Sync that fails half-way (here: the base cannot be read) is undone by
// the next one: every file it may have laid is restored.
func TestSyncInterrupted(t *testing.T) {
	d := NewDir(t.TempDir())
	os.MkdirAll(d.Src, 0o755)
	base := map[string]string{"a.c": "a base\n"}
	os.WriteFile(filepath.Join(d.Src, "a.c"), []byte(base["a.c"]), 0o644)
	broken := false
	baseFile := func(p string) ([]byte, bool, error) {
		if broken {
			return nil, false, os.ErrPermission
		}
		c, ok := base[p]
		return []byte(c), ok, nil
	}
	if _, err := d.Sync(map[string][]byte{"a.c": []byte("a patched\n")}, baseFile); err != nil {
		t.Fatal(err)
	}
	broken = true
	if _, err := d.Sync(map[string][]byte{"b.c": []byte("b new\n")}, baseFile); err == nil {
		t.Fatal("Sync with an unreadable base did not fail")
	}
	broken = false
	if _, err := d.Sync(map[string][]byte{}, baseFile); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(d.Src, "a.c")); string(b) != "a base\n" {
		t.Errorf("a.c = %q, want the base", b)
	}
	if _, err := os.Stat(filepath.Join(d.Src, "b.c")); !os.IsNotExist(err) {
		t.Errorf("b.c, laid by the interrupted Sync, is still there")
	}
}

// TestMakeLongLine: a line of make's output over 1 MiB stopped the
// scanner that read make's pipe; make then blocked writing to it and
// MakeWith waited for ever. Every line after it must still be read.
func TestMakeLongLine(t *testing.T) {
	src, _ := filepath.Abs(filepath.Join("testdata", "make-longline"))
	d := &Dir{Root: t.TempDir(), Src: src, Obj: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var seen []string
	var log bytes.Buffer
	err := d.Make(ctx, "x86_64", 1, func(done, total int, step string) { seen = append(seen, step) }, &log, "all")
	if ctx.Err() != nil {
		t.Fatalf("make did not end within a minute: %v", err)
	}
	if len(seen) != 2 || seen[1] != "CC kernel/unwind/deferred.o" {
		t.Errorf("steps %q, want the two, the second after the long line", seen)
	}
	var be *BuildError
	if !errors.As(err, &be) || len(be.Errors) != 1 || be.Errors[0].Line != 42 {
		t.Fatalf("err = %v, want the compile error after the long line", err)
	}
	if n := strings.Count(log.String(), "x"); n < 3<<20 {
		t.Errorf("log holds %d bytes of the long line, want all of it", n)
	}
	if !strings.HasSuffix(log.String(), "Error 2\n") || strings.Count(log.String(), "y") < 3<<20 {
		t.Errorf("log does not hold the last long line and make's message after it")
	}
}

// TestNewDirAbsolute: a build directory given relative (--build-root
// build, --build-dir b) is laid out with absolute paths: make runs in Src,
// where O=build/obj would name a folder inside the source.
func TestNewDirAbsolute(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	d := NewDir(filepath.Join("build", "matrix-x86_64"))
	for _, p := range []string{d.Root, d.Src, d.Obj} {
		if !filepath.IsAbs(p) || !strings.HasPrefix(p, wd) {
			t.Errorf("%s: want an absolute path under %s", p, wd)
		}
	}
}
