package buildtest

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestOptionsCheck: every refusal is an *OptionsError naming the flag,
// found without generating or building anything.
func TestOptionsCheck(t *testing.T) {
	installed := map[string]bool{"make": true, "flex": true, "bison": true, "bc": true, "awk": true, "ld": true, "objcopy": true, "perl": true, "gcc": true, "ccache": true, "distcc": true}
	old := lookPath
	defer func() { lookPath = old }()
	lookPath = func(name string) (string, error) {
		if installed[name] {
			return "/usr/bin/" + name, nil
		}
		return "", exec.ErrNotFound
	}
	tests := []struct {
		o    Options
		want string // "" for accepted
	}{
		{Options{}, ""},
		{Options{Jobs: 8, CC: "ccache gcc", Configs: []string{"x86_64"}}, ""},
		{Options{Jobs: 100000}, "--jobs 100000: at most 1024"},
		{Options{Jobs: -1}, "--jobs -1"},
		{Options{Patches: -2}, "--patches -2"},
		{Options{From: -1}, "--from -1"},
		{Options{Patches: 3, From: 10}, "--from 10 is after the last patch built (--patches 3)"},
		{Options{Configs: []string{"sparc"}}, `unknown configuration "sparc"`},
		{Options{Configs: []string{}}, "no configuration"},
		{Options{Sparse: "maybe"}, `--sparse "maybe"`},
		{Options{BaseBuild: BaseFull}, ""},
		{Options{BaseBuild: BaseOnDemand}, ""},
		{Options{BaseBuild: "half"}, `--base-build "half": give ondemand`},
		{Options{Sparse: "yes"}, "sparse (Debian package sparse)"},
		{Options{CC: "clang"}, "clang is not installed"},
		{Options{CC: "distcc"}, "give the compiler distcc runs"},
		{Options{CC: "ccache -x"}, "give the compiler ccache runs"},
		{Options{CC: "ccache clang-99"}, "the compiler clang-99 is not installed"},
		{Options{CC: "  "}, "give a compiler command"},
	}
	for _, tc := range tests {
		err := tc.o.Check()
		var oe *OptionsError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.o, err)
		case tc.want != "" && (!errors.As(err, &oe) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want an OptionsError holding %q", tc.o, err, tc.want)
		}
	}
	delete(installed, "bison")
	delete(installed, "gcc")
	if err := (Options{}).Check(); err == nil || !strings.Contains(err.Error(), "gcc (Debian package gcc), bison (Debian package bison)") {
		t.Errorf("missing tools: %v", err)
	}
	// perl runs scripts/kernel-doc (and scripts of the build): without
	// it the kernel-doc column said PASS for a check that never ran.
	delete(installed, "perl")
	if err := (Options{}).Check(); err == nil || !strings.Contains(err.Error(), "perl (Debian package perl)") {
		t.Errorf("perl missing: %v", err)
	}
	installed["perl"] = true
	installed["clang"] = true
	if err := (Options{CC: "ccache clang"}).Check(); err == nil || strings.Contains(err.Error(), "gcc") || !strings.Contains(err.Error(), "bison") {
		t.Errorf("with --cc ccache clang, gcc is not needed but bison is: %v", err)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{From: 99}, "--from 99: the series has 14 patches"},
		{Options{Patches: 20}, "--patches 20: the series has 14 patches"},
		{Options{From: 14}, ""},
	} {
		err := tc.o.checkSeries(14)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}
