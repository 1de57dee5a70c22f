package buildtest

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The outputs of the tools traceObjtool runs, from the kcsan build of v16
// with the x86 series on Debian's 6.12 (patch 12, all patches applied;
// testdata/objtool/README).
func readObjtoolData(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "objtool", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(name) == ".gz" {
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = z
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestObjtoolPlace(t *testing.T) {
	for _, tc := range []struct {
		msg string
		fn  string
		off uint64
		ok  bool
	}{
		{"objtool: syscall_exit_to_user_mode+0xa6: call to __kcsan_check_access() leaves .noinstr.text section", "syscall_exit_to_user_mode", 0xa6, true},
		{"objtool: irqentry_exit_to_user_mode+0xa6: call to __kcsan_check_access() leaves .noinstr.text section", "irqentry_exit_to_user_mode", 0xa6, true},
		{"objtool: __x64_sys_foo.cold+0x1f: unreachable instruction", "__x64_sys_foo.cold", 0x1f, true},
		{"objtool: missing symbol for section .text", "", 0, false},
	} {
		fn, off, ok := objtoolPlace(tc.msg)
		if fn != tc.fn || off != tc.off || ok != tc.ok {
			t.Errorf("%q: %s %#x %v, want %s %#x %v", tc.msg, fn, off, ok, tc.fn, tc.off, tc.ok)
		}
	}
}

func TestDefiningObject(t *testing.T) {
	nm := readObjtoolData(t, "nm-vmlinux.a.gz")
	for fn, want := range map[string]string{
		"syscall_exit_to_user_mode":  "kernel/entry/common.o",
		"irqentry_exit_to_user_mode": "kernel/entry/common.o",
		"unwind_user_faultable":      "kernel/unwind/deferred.o",
		"no_such_function":           "",
	} {
		if got := definingObject(nm, fn); got != want {
			t.Errorf("%s: defined in %q, want %q", fn, got, want)
		}
	}
}

func TestSymbolPlace(t *testing.T) {
	od := readObjtoolData(t, "objdump-t-common.o")
	for _, tc := range []struct {
		fn      string
		section string
		value   uint64
		ok      bool
	}{
		{"syscall_exit_to_user_mode", ".noinstr.text", 0x4e, true},
		{"irqentry_exit_to_user_mode", ".noinstr.text", 0x163, true},
		{"exit_to_user_mode_loop", ".text", 0x219, true},
		{"syscall_exit_to_user_mode_prepare", ".text", 0x106, true},
		{"exit_to_user_mode", "", 0, false}, // inlined: no symbol of its own
	} {
		sec, v, ok := symbolPlace(od, tc.fn)
		if sec != tc.section || v != tc.value || ok != tc.ok {
			t.Errorf("%s: %s %#x %v, want %s %#x %v", tc.fn, sec, v, ok, tc.section, tc.value, tc.ok)
		}
	}
}

// addr2line -f -i at syscall_exit_to_user_mode+0xa6 in kernel/entry/common.o
// compiled again with -g: the instrumented atomic of try_cmpxchg(), in
// unwind_reset_info(), in exit_to_user_mode(), in the function objtool
// checks; paths made relative to the source tree, discriminators left out.
func TestInlineChain(t *testing.T) {
	out := readObjtoolData(t, "addr2line-syscall_exit_to_user_mode.txt")
	const src = "/root/.cache/kpatch/build/x86_64-unwind-debug/src/"
	rel := func(p string) string {
		if len(p) > len(src) && p[:len(src)] == src {
			return p[len(src):]
		}
		return p
	}
	got := inlineChain(out, rel)
	want := []Frame{
		{Func: "instrument_atomic_read_write", File: "include/linux/instrumented.h", Line: 97},
		{Func: "unwind_reset_info", File: "include/linux/unwind_deferred.h", Line: 61},
		{Func: "exit_to_user_mode", File: "include/linux/entry-common.h", Line: 364},
		{Func: "syscall_exit_to_user_mode", File: "kernel/entry/common.c", Line: 223},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chain\n got %+v\nwant %+v", got, want)
	}
}

// The chain of the kcsan build's warning, blamed on v16 with the x86
// series after patch 12: try_cmpxchg() in unwind_reset_info() came with
// patch 6 (bitmask), the call in exit_to_user_mode() with patch 3
// (cache), which is the warning's origin.
func TestBlameChainKCSAN(t *testing.T) {
	s := stackX86(t, "")
	st := newSteps(s)
	out := readObjtoolData(t, "addr2line-syscall_exit_to_user_mode.txt")
	const src = "/root/.cache/kpatch/build/x86_64-unwind-debug/src/"
	fr := inlineChain(out, func(p string) string { return strings.TrimPrefix(p, src) })
	o, f := st.blameChain(fr, st.n)
	var patches []int
	for _, x := range fr {
		patches = append(patches, x.Patch)
	}
	if !reflect.DeepEqual(patches, []int{0, 6, 3, 0}) {
		t.Errorf("the frames' patches are %v, want [0 6 3 0] (base, bitmask, cache, base)", patches)
	}
	if f == nil || f.File != "include/linux/entry-common.h" || o.Patch != 3 || o.PatchID != "cache" {
		t.Errorf("origin %+v at %+v, want patch 3 (cache) at include/linux/entry-common.h", o, f)
	}
}
