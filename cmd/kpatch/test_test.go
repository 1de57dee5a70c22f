package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/boottest"
)

// kpatch test names the missing tools and their packages in one line and
// stops before it creates the build directory or reads the tree.
func TestTestMissingTools(t *testing.T) {
	tests := []struct {
		name    string
		without string
		want    string
	}{
		{"no qemu", "qemu-system-x86_64", "kpatch test qemu: missing qemu-system-x86_64 to boot the kernel (Debian package qemu-system-x86): apt-get install qemu-system-x86 (or run scripts/setup.sh)\n"},
		{"no bison", "bison", "kpatch test qemu: missing bison to build Kconfig's parser (Debian package bison): apt-get install bison (or run scripts/setup.sh)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := t.TempDir()
			for _, tl := range append(append([]boottest.Tool{}, boottest.BuildTools...), boottest.BootTools...) {
				if tl.Name != tc.without {
					// gcc finds every file it is asked for (itself).
					body := "#!/bin/sh\ncase \"$*\" in *-print-*) echo \"$0\" ;; esac\nexit 0\n"
					if err := os.WriteFile(filepath.Join(bin, tl.Name), []byte(body), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.Symlink("/bin/sh", filepath.Join(bin, "sh")); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin)
			build := filepath.Join(t.TempDir(), "build")
			var stdout, stderr bytes.Buffer
			code := run([]string{"test", "--qemu", "--stack", "x86", "--tree", "/nonexistent", "--base", "v6.12", "--build-dir", build}, &stdout, &stderr)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if stderr.String() != tc.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), tc.want)
			}
			if stdout.Len() != 0 || strings.Contains(stderr.String(), "kbuild") {
				t.Errorf("the run went on: stdout %q", stdout.String())
			}
			if _, err := os.Stat(build); !os.IsNotExist(err) {
				t.Errorf("build directory created: %v", err)
			}
		})
	}
}
