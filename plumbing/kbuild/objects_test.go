package kbuild

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseCmdFile(t *testing.T) {
	data, err := os.ReadFile("testdata/cmd/deps-fork.o.cmd")
	if err != nil {
		t.Fatal(err)
	}
	c := ParseCmdFile("kernel/fork.o", data)
	if c.Source != "/k/src/kernel/fork.c" {
		t.Errorf("source = %q", c.Source)
	}
	if c.Command == "" || c.Command[:3] != "gcc" {
		t.Errorf("command = %q", c.Command)
	}
	wantDeps := []string{"/k/src/include/linux/compiler-version.h", "/k/src/include/linux/kconfig.h",
		"/k/src/include/linux/sched.h", "arch/x86/include/generated/asm/unwind_user.h",
		"/usr/lib/gcc/x86_64-linux-gnu/12/include/stdarg.h"}
	if !reflect.DeepEqual(c.Deps, wantDeps) {
		t.Errorf("deps = %q\nwant %q", c.Deps, wantDeps)
	}
	if want := []string{"CC_VERSION_TEXT", "CPU_BIG_ENDIAN", "UNWIND_USER"}; !reflect.DeepEqual(c.Config, want) {
		t.Errorf("config = %q, want %q", c.Config, want)
	}
}

func TestScanObjects(t *testing.T) {
	obj := t.TempDir()
	data, err := os.ReadFile("testdata/cmd/deps-fork.o.cmd")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(obj, "kernel"), 0o755)
	os.WriteFile(filepath.Join(obj, "kernel/.fork.o.cmd"), data, 0o644)
	// Not objects compiled from C: an archive's and an assembler file's.
	os.WriteFile(filepath.Join(obj, "kernel/.built-in.a.cmd"), []byte("savedcmd_kernel/built-in.a := ar\n"), 0o644)
	os.WriteFile(filepath.Join(obj, "kernel/.entry.o.cmd"), []byte("savedcmd_kernel/entry.o := gcc\nsource_kernel/entry.o := /k/src/kernel/entry.S\n"), 0o644)
	got, err := ScanObjects(obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["kernel/fork.o"] == nil {
		t.Errorf("ScanObjects = %v, want kernel/fork.o only", got)
	}
}

func TestArchiveMembers(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{`savedcmd_kernel/locking/built-in.a := rm -f kernel/locking/built-in.a;  printf "kernel/locking/%s " mutex.o semaphore.o | xargs ar cDPrST kernel/locking/built-in.a`,
			[]string{"kernel/locking/mutex.o", "kernel/locking/semaphore.o"}},
		{`savedcmd_kernel/built-in.a := rm -f kernel/built-in.a;  printf "kernel/%s " fork.o locking/built-in.a exit.o | xargs ar cDPrST kernel/built-in.a`,
			[]string{"kernel/fork.o", "kernel/exit.o"}},
		{`savedcmd_lib/lib.a := rm -f lib/lib.a; printf "lib/%s " ctype.o | xargs ar cDPrsT lib/lib.a`, []string{"lib/ctype.o"}},
		{`savedcmd_init/built-in.a := rm -f init/built-in.a;  printf "init/%s " | xargs ar cDPrST init/built-in.a`, nil},
	}
	for _, tc := range tests {
		if got := archiveMembers(tc.cmd); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.cmd, got, tc.want)
		}
	}
}
