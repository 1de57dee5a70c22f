// Package gittest runs a real git for tests that compare kpatch's output
// with git's, isolated from the user's and the system's configuration so
// that only git's defaults apply, and generates the random but
// reproducible histories the differential tests compare on (Generate,
// GenerateSeries; sizes and seeds from -kpatch.cases and -kpatch.seed).
package gittest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
// system or global configuration, the C locale, no COLUMNS, and a fixed
// author, committer and date.
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
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"LC_ALL=C",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000",
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
