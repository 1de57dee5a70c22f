package gittest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGlobalConfigStaysInHome: a test that writes git's global
// configuration writes a file in its home, and the null device stays a
// device (git config --global replaces the file it names by a rename,
// which as root turns /dev/null into a regular file for every process).
func TestGlobalConfigStaysInHome(t *testing.T) {
	Require(t)
	home := t.TempDir()
	Run(t, home, "config", "--global", "kpatch.tree", "/some/tree")
	got, err := os.ReadFile(filepath.Join(home, ".gitconfig"))
	if err != nil {
		t.Fatalf("the global configuration is not in the test's home: %v", err)
	}
	if want := "tree = /some/tree"; !strings.Contains(string(got), want) {
		t.Errorf("%s holds %q, want a line %q", filepath.Join(home, ".gitconfig"), got, want)
	}
	fi, err := os.Stat(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeDevice == 0 {
		t.Errorf("%s is not a device (mode %v)", os.DevNull, fi.Mode())
	}
	if out := Run(t, home, "config", "--global", "kpatch.tree"); string(out) != "/some/tree\n" {
		t.Errorf("git config --global kpatch.tree reads %q", out)
	}
}
