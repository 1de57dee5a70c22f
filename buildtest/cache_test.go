package buildtest

import (
	"reflect"
	"strconv"
	"testing"

	"kpatch/plumbing/kbuild"
)

func TestDepNames(t *testing.T) {
	c := &kbuild.CmdFile{
		Object: "kernel/fork.o",
		Source: "/k/src/kernel/fork.c",
		Deps: []string{"/k/src/include/linux/compiler-version.h", "/k/src/include/linux/kconfig.h",
			"/k/src/include/linux/sched.h", "arch/x86/include/generated/asm/unwind_user.h",
			"/usr/lib/gcc/x86_64-linux-gnu/12/include/stdarg.h"},
		Config: []string{"CC_VERSION_TEXT", "CPU_BIG_ENDIAN", "UNWIND_USER"},
	}
	names := depNames(c, "/k/src", "/k/obj")
	want := []string{"src:kernel/fork.c", "src:include/linux/compiler-version.h", "src:include/linux/kconfig.h",
		"src:include/linux/sched.h", "obj:arch/x86/include/generated/asm/unwind_user.h",
		"abs:/usr/lib/gcc/x86_64-linux-gnu/12/include/stdarg.h",
		"cfg:CC_VERSION_TEXT", "cfg:CPU_BIG_ENDIAN", "cfg:UNWIND_USER"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names = %q\nwant %q", names, want)
	}
}

func TestObjectCache(t *testing.T) {
	st := loadState(t.TempDir())
	vals := map[string]string{"src:a.c": "1", "src:a.h": "2", "cfg:X": "y"}
	val := func(n string) string { return vals[n] }
	r := objResult{Warnings: []Diag{{File: "a.c", Severity: "warning", Message: "w"}}}
	st.remember("a.o", "env1", []string{"src:a.c", "src:a.h", "cfg:X"}, val, r)
	if got, ok := st.lookup("a.o", "env1", val); !ok || len(got.Warnings) != 1 {
		t.Fatalf("lookup after remember: %v %v", got, ok)
	}
	if _, ok := st.lookup("a.o", "env2", val); ok {
		t.Errorf("hit with another environment")
	}
	vals["src:a.h"] = "3"
	if _, ok := st.lookup("a.o", "env1", val); ok {
		t.Errorf("hit after a dependency changed")
	}
	vals["src:a.h"] = "2"
	vals["cfg:X"] = "n"
	if _, ok := st.lookup("a.o", "env1", val); ok {
		t.Errorf("hit after a configuration symbol changed")
	}
	vals["cfg:X"] = "y"
	dir := t.TempDir()
	if err := st.save(dir); err != nil {
		t.Fatal(err)
	}
	st2 := loadState(dir)
	if _, ok := st2.lookup("a.o", "env1", val); !ok {
		t.Errorf("no hit after save and load")
	}
}

// A failed compile leaves no .cmd file, so its dependencies are unknown:
// a failure must not be served again once the (unknown) cause changed.
// This happened: a stub missing from a header that kernel/fork.o did not
// include at the base was remembered against fork.o's base dependencies,
// and the fixed series then "failed" from the cache.
func TestFailuresNotRemembered(t *testing.T) {
	vals := map[string]string{"src:kernel/fork.c": "1"}
	val := func(n string) string { return vals[n] }
	failed := objResult{Failed: true, Errors: []Diag{{File: "kernel/fork.c", Severity: "error", Message: "implicit declaration"}}}
	for _, tc := range []struct {
		name  string
		setup func(st *state)
	}{
		{"remember", func(st *state) {
			st.remember("kernel/fork.o", "env", []string{"src:kernel/fork.c"}, val, failed)
		}},
		{"state of an earlier version", func(st *state) {
			id := st.intern("src:kernel/fork.c")
			st.Objects["kernel/fork.o"] = []cacheEntry{{Env: "env", Deps: []int32{id}, Sum: sumOf(st.Paths, []int32{id}, val), Result: failed}}
			st.Steps["k4"] = stepRecord{Cell: Cell{Status: Fail}, Config: map[string]string{}}
			st.Steps["k3"] = stepRecord{Cell: Cell{Status: Pass}, Config: map[string]string{}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st := loadState(dir)
			tc.setup(st)
			if err := st.save(dir); err != nil {
				t.Fatal(err)
			}
			st = loadState(dir)
			if r, ok := st.lookup("kernel/fork.o", "env", val); ok {
				t.Errorf("failed compile served from the cache: %+v", r)
			}
			if _, ok := st.Steps["k4"]; ok {
				t.Errorf("failed step kept")
			}
			if tc.name != "remember" {
				if _, ok := st.Steps["k3"]; !ok {
					t.Errorf("passing step dropped")
				}
			}
		})
	}
}

// A column of patches gives an object as many distinct inputs as patches
// that change a header it includes (seven in v11); deriving the column
// again must find every one of them, in patch order, twice over.
func TestObjectCacheKeepsAColumn(t *testing.T) {
	st := loadState(t.TempDir())
	vals := map[string]string{}
	val := func(n string) string { return vals[n] }
	const states = 14 // two revisions' worth
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < states; i++ {
			vals["src:include/linux/unwind_deferred_types.h"] = strconv.Itoa(i)
			if _, ok := st.lookup("kernel/fork.o", "env", val); ok {
				continue
			}
			if pass > 0 {
				t.Errorf("pass %d: state %d was forgotten", pass+1, i)
			}
			st.remember("kernel/fork.o", "env", []string{"src:include/linux/unwind_deferred_types.h"}, val, objResult{})
		}
	}
}
