package buildtest

import (
	"fmt"
	"testing"

	"kpatch/spec"
	"kpatch/templates/linux"
)

// The symbols a configuration must have after the last patch built come
// from the spec's facts, by revision and patch: v14 dropped compat
// unwinding, so its x86_64 build must not have HAVE_UNWIND_USER_COMPAT_FP.
func TestWithFinalFollowsTheRevision(t *testing.T) {
	sp, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version, step int
		config, want  string
	}{
		{11, 14, "x86_64", "map[HAVE_UNWIND_USER_COMPAT_FP:y HAVE_UNWIND_USER_FP:y UNWIND_USER:y]"},
		{11, 13, "x86_64", "map[HAVE_UNWIND_USER_COMPAT_FP:n HAVE_UNWIND_USER_FP:y UNWIND_USER:y]"},
		{11, 5, "x86_64", "map[]"},
		{14, 12, "x86_64", "map[HAVE_UNWIND_USER_COMPAT_FP:n HAVE_UNWIND_USER_FP:y UNWIND_USER:y]"},
		{14, 12, "x86_64-noia32", "map[HAVE_UNWIND_USER_COMPAT_FP:n HAVE_UNWIND_USER_FP:y UNWIND_USER:y]"},
		{13, 3, "i386", "map[HAVE_UNWIND_USER_FP:n UNWIND_USER:n]"},
	} {
		r, err := sp.Revision(tc.version)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := ConfigNamed(tc.config)
		got, err := WithFinal(c, r, tc.step)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(got.Final); s != tc.want {
			t.Errorf("v%d patch %d %s: %s, want %s", tc.version, tc.step, tc.config, s, tc.want)
		}
	}
	for _, c := range Configs {
		if c.Final != nil {
			t.Errorf("%s: Final is set in Go; it is a fact of the spec", c.Name)
		}
	}
}
