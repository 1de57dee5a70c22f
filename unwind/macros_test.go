package unwind

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseFrameMacros(t *testing.T) {
	i386 := MacroEnv{Arch: "386", Defines: []string{"CONFIG_IA32_EMULATION"}}
	noIA32 := MacroEnv{Arch: "amd64", Defines: []string{"CONFIG_X86_64"}}
	tests := []struct {
		file string
		env  MacroEnv
		want map[string]Frame
		err  []string // substrings of the error
	}{
		{file: "unwind_user.h.14", env: X86_64Env, want: map[string]Frame{
			"ARCH_INIT_USER_FP_FRAME":        {CFAOff: 16, RAOff: -8, FPOff: -16, UseFP: true},
			"ARCH_INIT_USER_COMPAT_FP_FRAME": {CFAOff: 8, RAOff: -4, FPOff: -8, UseFP: true},
		}},
		{file: "unwind_user.h.14", env: noIA32, want: map[string]Frame{
			"ARCH_INIT_USER_FP_FRAME": {CFAOff: 16, RAOff: -8, FPOff: -16, UseFP: true},
		}},
		{file: "unwind_user.h.14", env: i386, want: map[string]Frame{
			"ARCH_INIT_USER_FP_FRAME":        {CFAOff: 8, RAOff: -4, FPOff: -8, UseFP: true},
			"ARCH_INIT_USER_COMPAT_FP_FRAME": {CFAOff: 8, RAOff: -4, FPOff: -8, UseFP: true},
		}},
		{file: "unwind_user.h.12", env: X86_64Env, want: map[string]Frame{
			"ARCH_INIT_USER_FP_FRAME": {CFAOff: 16, RAOff: -8, FPOff: -16, UseFP: true},
		}},
		{file: "macros/positional.h", env: X86_64Env, want: map[string]Frame{
			"ARCH_INIT_USER_FP_FRAME": {CFAOff: 24, RAOff: -8},
		}},
		{file: "macros/derived.h", env: X86_64Env, want: map[string]Frame{
			"ARCH_INIT_USER_FP_FRAME": {CFAOff: 24, RAOff: -8},
		}},
		{file: "macros/derived.h", env: i386, want: map[string]Frame{
			"ARCH_INIT_USER_FP_FRAME": {CFAOff: 12, RAOff: -4},
		}},
		{file: "macros/empty.h", env: X86_64Env, want: map[string]Frame{"ARCH_INIT_USER_FP_FRAME": {}}},
		{file: "macros/truncated.h", env: X86_64Env, want: map[string]Frame{
			"ARCH_INIT_USER_FP_FRAME": {CFAOff: 16, RAOff: -8, UseFP: true},
		}},
		{file: "macros/function-like.h", env: X86_64Env, err: []string{"no object-like ARCH_INIT_USER_*_FRAME"}},
		{file: "macros/undefined.h", env: X86_64Env, err: []string{"ARCH_INIT_USER_FP_FRAME:1:", "UNKNOWN_THING"}},
		{file: "macros/unterminated.h", env: X86_64Env, err: []string{"unwind_user.h:3:", "#endif"}},
		{file: "macros/derived.h", env: MacroEnv{Arch: "arm64"}, want: map[string]Frame{
			"ARCH_INIT_USER_FP_FRAME": {CFAOff: 24, RAOff: -8},
		}},
		{file: "macros/empty.h", env: MacroEnv{Arch: "pdp11"}, err: []string{"pdp11"}},
	}
	for _, tc := range tests {
		t.Run(tc.file+"/"+tc.env.Arch+"/"+strings.Join(tc.env.Defines, ","), func(t *testing.T) {
			header, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseFrameMacrosEnv(header, tc.env)
			if tc.err != nil {
				if err == nil {
					t.Fatalf("no error; frames %v", got)
				}
				for _, s := range tc.err {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("frames\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// The walker's frames are the ones the seed's header defines.
func TestWalkerFramesMatchHeader(t *testing.T) {
	header, err := os.ReadFile("testdata/unwind_user.h.14")
	if err != nil {
		t.Fatal(err)
	}
	frames, err := ParseFrameMacros(header)
	if err != nil {
		t.Fatal(err)
	}
	if frames["ARCH_INIT_USER_FP_FRAME"] != FrameX86_64 || frames["ARCH_INIT_USER_COMPAT_FP_FRAME"] != FrameX86Compat {
		t.Errorf("header frames %v; walker %v and %v", frames, FrameX86_64, FrameX86Compat)
	}
	c := mustX86(t, 14)
	if *c.FP != frames["ARCH_INIT_USER_FP_FRAME"] || *c.CompatFP != frames["ARCH_INIT_USER_COMPAT_FP_FRAME"] {
		t.Errorf("X86_64(11, 14) frames %v %v differ from the header's", *c.FP, *c.CompatFP)
	}
	if err := CheckX86Frames(header); err != nil {
		t.Error(err)
	}
	// From the seed itself, when it is there.
	if testing.Short() {
		return
	}
	seedHeader := seedFiles(t, 14)["arch/x86/include/asm/unwind_user.h"]
	if err := CheckX86Frames(seedHeader); err != nil {
		t.Errorf("seed header after patch 14: %v", err)
	}
}

func TestCheckX86FramesRejects(t *testing.T) {
	h14, err := os.ReadFile("testdata/unwind_user.h.14")
	if err != nil {
		t.Fatal(err)
	}
	h12, err := os.ReadFile("testdata/unwind_user.h.12")
	if err != nil {
		t.Fatal(err)
	}
	wrongRA := bytes.Replace(h14, []byte("sizeof(long) * -1"), []byte("sizeof(long) * -3"), 1)
	if bytes.Equal(wrongRA, h14) {
		t.Fatal("the header changed; update the test")
	}
	for name, tc := range map[string]struct {
		header []byte
		want   string
	}{
		"patch 12 has no compat frame": {h12, "does not define ARCH_INIT_USER_COMPAT_FP_FRAME"},
		"wrong ra_off":                 {wrongRA, ".ra_off=-24"},
		"not C":                        {[]byte("#define ARCH_INIT_USER_FP_FRAME .cfa_off = )(,\n"), "ARCH_INIT_USER_FP_FRAME:1:"},
	} {
		err := CheckX86Frames(tc.header)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, tc.want)
		}
	}
}
