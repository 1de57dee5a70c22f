// Package gittest runs a real git for tests that compare kpatch's output
// with git's, isolated from the user's and the system's configuration so
// that only git's defaults apply, and generates the random but
// reproducible histories the differential tests compare on (Generate,
// GenerateSeries; sizes and seeds from -kpatch.cases and -kpatch.seed).
package gittest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"kpatch/internal/testenv"
)

// Require makes sure a git binary is available (see package testenv for
// what a missing one means).
func Require(t testing.TB) {
	t.Helper()
	testenv.Tool(t, "git", "git")
}

// Environ returns the environment for git with home as its home: no
// system configuration, a global one in home (absent unless a test writes
// it; never a device such as /dev/null, which `git config --global`
// run as root would replace with a regular file), no automatic
// maintenance, the C locale, no COLUMNS, and a fixed author, committer
// and date.
func Environ(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") ||
			strings.HasPrefix(kv, "XDG_CONFIG_HOME=") || strings.HasPrefix(kv, "LC_") ||
			strings.HasPrefix(kv, "LANG=") || strings.HasPrefix(kv, "COLUMNS=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"LC_ALL=C",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000",
		// No "git maintenance run --auto" after each commit, am or merge:
		// a second git process per command that changes nothing a test
		// compares (a test repository never reaches gc's thresholds).
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=maintenance.auto", "GIT_CONFIG_VALUE_0=false",
	)
}

// Run runs git in dir with Environ(dir) and returns its standard output;
// a failure fails the test with git's standard error.
func Run(t testing.TB, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = Environ(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// Object is an object as git cat-file prints it.
type Object struct {
	Type string // "blob", "tree", "commit" or "tag"
	Data []byte
}

// CatFile reads the objects named by ids (full hex ids) from the repository
// at dir with one `git cat-file --batch`, so that a test comparing many
// objects with git starts git once instead of twice per object.
func CatFile(t testing.TB, dir string, ids []string) map[string]Object {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = dir
	cmd.Env = Environ(dir)
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch: %v\n%s", err, stderr.String())
	}
	objs := make(map[string]Object, len(ids))
	for len(out) > 0 {
		nl := bytes.IndexByte(out, '\n')
		if nl < 0 {
			t.Fatalf("git cat-file --batch: header without a newline: %q", out)
		}
		f := strings.Fields(string(out[:nl]))
		if len(f) != 3 {
			t.Fatalf("git cat-file --batch: %q", out[:nl])
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || nl+1+size+1 > len(out) {
			t.Fatalf("git cat-file --batch: bad size in %q", out[:nl])
		}
		objs[f[0]] = Object{Type: f[1], Data: out[nl+1 : nl+1+size]}
		out = out[nl+1+size+1:]
	}
	return objs
}

// templates are the repositories Template built, by name.
var templates struct {
	sync.Mutex
	byName map[string]*template
}

type template struct {
	dir    string
	failed bool
}

// Template returns a new copy (in a temporary directory of t) of a
// directory build makes once per test process, such as a repository that
// a dozen git commands set up and that several tests change or damage: a
// copy costs no git process. The first caller's build runs with its t; if
// it fails, every later caller fails too. A package that uses Template
// calls RemoveTemplates from its TestMain.
func Template(t testing.TB, name string, build func(t testing.TB, dir string)) string {
	t.Helper()
	templates.Lock()
	defer templates.Unlock()
	if templates.byName == nil {
		templates.byName = map[string]*template{}
	}
	tp := templates.byName[name]
	if tp == nil {
		dir, err := os.MkdirTemp("", "kpatch-template-")
		if err != nil {
			t.Fatal(err)
		}
		tp = &template{dir: dir, failed: true}
		templates.byName[name] = tp
		build(t, dir) // a t.Fatal here leaves tp failed
		tp.failed = false
	}
	if tp.failed {
		t.Fatalf("setting up %s failed in an earlier test", name)
	}
	dst := t.TempDir()
	if err := CopyTree(dst, tp.dir); err != nil {
		t.Fatal(err)
	}
	return dst
}

// RemoveTemplates removes the directories Template built.
func RemoveTemplates() {
	templates.Lock()
	defer templates.Unlock()
	for _, tp := range templates.byName {
		os.RemoveAll(tp.dir)
	}
	templates.byName = nil
}

// CopyTree copies the directories and regular files under src into dst
// (which may exist), modes included: git's read-only objects stay
// read-only.
func CopyTree(dst, src string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
				return err
			}
			return os.Chmod(to, info.Mode().Perm())
		}
		return fmt.Errorf("copying %s: not a directory or a regular file", p)
	})
}
