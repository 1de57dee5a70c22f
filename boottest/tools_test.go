package boottest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGCC is a stand-in gcc: it names an existing file for
// -print-file-name and -print-libgcc-file-name, but only the bare name for
// -m32 when the host has no 32-bit libc (NO_M32), and fails to preprocess
// gelf.h when it has no libelf headers (NO_LIBELF).
const fakeGCC = `#!/bin/sh
m32=
for a in "$@"; do
	case "$a" in
	-m32) m32=1 ;;
	-print-file-name=*|-print-libgcc-file-name)
		if [ -n "$m32" ] && [ -n "$NO_M32" ]; then echo libc.a; else echo "$0"; fi
		exit 0 ;;
	-E) grep -q gelf.h && [ -n "$NO_LIBELF" ] && { echo "gelf.h: No such file or directory" >&2; exit 1; }
		exit 0 ;;
	esac
done
exit 0
`

// toolPath makes a directory of stand-in tools (every tool of BuildTools
// and BootTools but those in without) and makes it the whole $PATH.
func toolPath(t *testing.T, without ...string) {
	t.Helper()
	dir := t.TempDir()
	skip := map[string]bool{}
	for _, w := range without {
		skip[w] = true
	}
	for _, tl := range append(append([]Tool{}, BuildTools...), BootTools...) {
		if skip[tl.Name] {
			continue
		}
		body := "#!/bin/sh\nexit 0\n"
		if tl.Name == "gcc" {
			body = fakeGCC
		}
		if err := os.WriteFile(filepath.Join(dir, tl.Name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The stand-ins are shell scripts; sh and grep come from the host.
	for _, host := range []string{"sh", "grep"} {
		p, err := lookHost(host)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(dir, host)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
}

func lookHost(name string) (string, error) {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", errors.New(name + " not found")
}

func TestCheckTools(t *testing.T) {
	tests := []struct {
		name    string
		without []string
		env     []string // NO_M32, NO_LIBELF
		boot    bool
		want    string   // the whole message; "" for no error
		notIn   []string // must not be named
	}{
		{name: "everything there", boot: true},
		{name: "no qemu, build only", without: []string{"qemu-system-x86_64"}},
		{
			name: "no qemu", without: []string{"qemu-system-x86_64"}, boot: true,
			want: "missing qemu-system-x86_64 to boot the kernel (Debian package qemu-system-x86): apt-get install qemu-system-x86 (or run scripts/setup.sh)",
		},
		{
			name: "no flex nor bison", without: []string{"flex", "bison"}, boot: true,
			want: "missing flex to build Kconfig's lexer (Debian package flex), bison to build Kconfig's parser (Debian package bison): apt-get install flex bison (or run scripts/setup.sh)",
		},
		{
			name: "no binutils", without: []string{"ld", "objcopy"},
			want: "missing ld to link the kernel (Debian package binutils), objcopy to make the bzImage (Debian package binutils): apt-get install binutils (or run scripts/setup.sh)",
		},
		{
			name: "no bc, xz, awk, make", without: []string{"bc", "xz", "awk", "make"},
			want: "missing make to run the kernel build (Debian package make), bc to compute the kernel's time constants (Debian package bc), awk to generate the x86 instruction tables (Debian package mawk), xz to compress the bzImage (Debian package xz-utils): apt-get install make bc mawk xz-utils (or run scripts/setup.sh)",
		},
		{
			name: "no gcc-multilib", env: []string{"NO_M32"}, boot: true,
			want: "missing gcc -m32 -static to build the 32-bit test programs (Debian package gcc-multilib): apt-get install gcc-multilib (or run scripts/setup.sh)",
		},
		{
			name: "no libelf headers", env: []string{"NO_LIBELF"},
			want: "missing libelf's gelf.h to build objtool (Debian package libelf-dev): apt-get install libelf-dev (or run scripts/setup.sh)",
		},
		{
			name: "no gcc: the compile checks are not tried", without: []string{"gcc", "git"}, env: []string{"NO_M32"}, boot: true,
			want:  "missing git to read the base tree (Debian package git), gcc to compile the kernel and the test programs (Debian package gcc): apt-get install git gcc (or run scripts/setup.sh)",
			notIn: []string{"gcc-multilib"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_M32", "")
			t.Setenv("NO_LIBELF", "")
			for _, e := range tc.env {
				t.Setenv(e, "1")
			}
			toolPath(t, tc.without...)
			err := CheckTools(context.Background(), tc.boot)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckTools: %v", err)
				}
				return
			}
			var me *MissingError
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, want *MissingError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("message is not one line: %q", err)
			}
			for _, s := range tc.notIn {
				if strings.Contains(err.Error(), s) {
					t.Errorf("message names %q: %s", s, err)
				}
			}
		})
	}
}

// Run and Build stop at the check, before they create or unpack anything.
func TestRunChecksToolsFirst(t *testing.T) {
	toolPath(t, "qemu-system-x86_64", "flex")
	dir := filepath.Join(t.TempDir(), "build")
	// No series is given: the check comes before anything reads it.
	_, err := Run(context.Background(), nil, Options{BuildOptions: BuildOptions{BuildDir: dir}})
	if err == nil || !strings.HasPrefix(err.Error(), "missing flex ") || !strings.Contains(err.Error(), "qemu-system-x86") {
		t.Errorf("Run: %v", err)
	}
	_, err = Build(context.Background(), nil, BuildOptions{BuildDir: dir})
	if err == nil || !strings.HasPrefix(err.Error(), "missing flex ") || strings.Contains(err.Error(), "qemu") {
		t.Errorf("Build: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the build directory was created: %v", err)
	}
}

// BenchmarkCheckTools measures what the check adds to every run on this
// host (the $PATH lookups and four short gcc runs).
func BenchmarkCheckTools(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if err := CheckTools(context.Background(), true); err != nil {
			b.Fatal(err)
		}
	}
}
