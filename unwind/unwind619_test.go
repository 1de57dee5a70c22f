package unwind

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// What the walker facts of Linux 6.19's x86 part make of the walker, and
// the mixtures no kernel had refused.
func TestFromFacts619(t *testing.T) {
	c, err := FromFacts(facts619(16))
	if err != nil {
		t.Fatal(err)
	}
	if c.FP == nil || *c.FP != FrameX86_64 || c.CompatFP == nil || *c.CompatFP != FrameX86Compat ||
		c.SegmentBases || c.Align != "word-size" || !c.StopFPBelowSP || !c.FuncStart || c.MaxEntries != 510 {
		t.Errorf("6.19 after patch 16: %+v", c)
	}
	if c, err := FromFacts(facts619(12)); err != nil || c.FuncStart {
		t.Errorf("6.19 after patch 12: FuncStart %v, error %v", c.FuncStart, err)
	}
	for name, tc := range map[string]struct {
		edit map[string]string
		want string
	}{
		"segment bases":      {map[string]string{"segment-bases": "yes"}, "no kernel has both"},
		"sizeof(long) align": {map[string]string{"align": "cfa"}, "align: cfa: no kernel has both"},
		"unknown rule":       {map[string]string{"function-start": "always"}, `function-start: unknown value "always"`},
		"unknown alignment":  {map[string]string{"align": "ws"}, `align: unknown value "ws"`},
	} {
		f := facts619(16)
		for k, v := range tc.edit {
			f[k] = v
		}
		if _, err := FromFacts(f); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, tc.want)
		}
	}
}

// At a function's first instruction the caller's frame is not made yet:
// bp is still the caller's and the return address is at sp. 6.19 takes
// it from there when the walk is made in a uprobe handler at push %bp
// (or ENDBR in a 64-bit task of an IBT kernel); otherwise, as every
// earlier revision, it reads the caller's frame and misses the caller.
func TestFunctionStart619(t *testing.T) {
	c16, err := FromFacts(facts619(16))
	if err != nil {
		t.Fatal(err)
	}
	c12, _ := FromFacts(facts619(12))
	noIBT := c16
	noIBT.NoIBT = true

	// 64-bit: f's first instruction at 0x401000; sp holds the return
	// address into its caller g (0x402222); bp is g's frame at 0x7020,
	// which holds main's frame and the return into main (0x403333).
	mem64 := newStack(0x7008, 8).
		put(0x7008, 0x402222).
		put(0x7020, 0x7040, 0x403333).
		put(0x7040, 0, 0x404444).mem()
	regs64 := Regs{IP: 0x401000, SP: 0x7008, FP: 0x7020}
	// The same with 4-byte words, the frames 4- but not 8-byte aligned.
	mem32 := newStack(0xffd0_0004, 4).
		put(0xffd0_0004, 0x0804_2222).
		put(0xffd0_0014, 0xffd0_0024, 0x0804_3333).
		put(0xffd0_0024, 0, 0x0804_4444).mem()
	regs32 := Regs{IP: 0x0804_1000, SP: 0xffd0_0004, FP: 0xffd0_0014, Compat: true}

	push, endbr64, endbr32, mov := [4]byte{0x55, 0x48, 0x89, 0xe5}, [4]byte{0xf3, 0x0f, 0x1e, 0xfa}, [4]byte{0xf3, 0x0f, 0x1e, 0xfb}, [4]byte{0x48, 0x89, 0xe5, 0x90}
	uprobe := func(r Regs, insn [4]byte) Regs { r.Uprobe, r.UprobeInsn = true, insn; return r }
	withCaller64 := []uint64{0x401000, 0x402222, 0x403333, 0x404444}
	noCaller64 := []uint64{0x401000, 0x403333, 0x404444}
	withCaller32 := []uint64{0x0804_1000, 0x0804_2222, 0x0804_3333, 0x0804_4444}
	noCaller32 := []uint64{0x0804_1000, 0x0804_3333, 0x0804_4444}
	for _, tc := range []struct {
		name string
		cfg  Config
		mem  Segments
		regs Regs
		want []uint64
	}{
		{"64-bit uprobe at push", c16, mem64, uprobe(regs64, push), withCaller64},
		{"64-bit uprobe at endbr64", c16, mem64, uprobe(regs64, endbr64), withCaller64},
		{"64-bit uprobe at endbr32", c16, mem64, uprobe(regs64, endbr32), withCaller64},
		{"64-bit uprobe at endbr64, no IBT", noIBT, mem64, uprobe(regs64, endbr64), noCaller64},
		{"64-bit uprobe at push, no IBT", noIBT, mem64, uprobe(regs64, push), withCaller64},
		{"64-bit uprobe at mov after push", c16, mem64, uprobe(regs64, mov), noCaller64},
		{"64-bit, no uprobe", c16, mem64, regs64, noCaller64},
		{"64-bit uprobe at push, patch 12", c12, mem64, uprobe(regs64, push), noCaller64},
		{"IA32 uprobe at push", c16, mem32, uprobe(regs32, push), withCaller32},
		{"IA32 uprobe at endbr32", c16, mem32, uprobe(regs32, endbr32), noCaller32},
		{"IA32, no uprobe", c16, mem32, regs32, noCaller32},
		{"IA32 uprobe at push, patch 12", c12, mem32, uprobe(regs32, push), noCaller32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := tc.cfg.Walk(tc.mem, tc.regs)
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.IPs(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("trace %x (stop %v), want %x", got, tr.Stop, tc.want)
			}
		})
	}

	// Only the first step: a uprobe at push does not make the next
	// frame an entry frame (topmost is cleared by the step).
	u, err := c16.Start(mem64, uprobe(regs64, push))
	if err != nil {
		t.Fatal(err)
	}
	if !u.State.Topmost || !u.Next() || u.State.Topmost || u.State.SP != 0x7010 || u.State.FP != 0x7020 {
		t.Errorf("after the entry step: %+v", u.State)
	}
	// A misaligned sp at entry ends the walk at the entry frame's check.
	tr, _ := c16.Walk(mem64, Regs{IP: 1, SP: 0x7009, FP: 0x7020, Uprobe: true, UprobeInsn: push})
	if tr.Stop != StopMisaligned || len(tr.Entries) != 1 {
		t.Errorf("misaligned sp at entry: %d entries, stop %v", len(tr.Entries), tr.Stop)
	}
	// A compat frame is aligned to 4 bytes, not 8 (the walks above);
	// a 64-bit one to 8.
	tr, _ = c16.Walk(mem64, Regs{IP: 1, SP: 0x7000, FP: 0x7024})
	if tr.Stop != StopMisaligned || len(tr.Entries) != 1 {
		t.Errorf("64-bit frame 4-byte aligned: %d entries, stop %v", len(tr.Entries), tr.Stop)
	}
}

// The frames the walker uses for 6.19 are the ones v6.19's
// arch/x86/include/asm/unwind_user.h defines, evaluated as C for both word
// sizes; the state before ae25884ad749 (v6.19 less 0015 and 0013) has no
// entry frame; a wrong offset is caught.
func TestFramesMatchHeader619(t *testing.T) {
	header, err := os.ReadFile(filepath.Join(sharedRevisions(t), "v6.19", "arch/x86/include/asm/unwind_user.h"))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckX86WordSizeFrames(header, true); err != nil {
		t.Error(err)
	}
	patch12 := tree619(12)(t)["arch/x86/include/asm/unwind_user.h"]
	if err := CheckX86WordSizeFrames(patch12, false); err != nil {
		t.Errorf("after patch 12: %v", err)
	}
	if err := CheckX86WordSizeFrames(patch12, true); err == nil || !strings.Contains(err.Error(), "does not define ARCH_INIT_USER_FP_ENTRY_FRAME") {
		t.Errorf("after patch 12, with the entry frame: %v", err)
	}
	bad := strings.Replace(string(header), ".cfa_off\t=  1*(ws)", ".cfa_off\t=  2*(ws)", 1)
	if bad == string(header) {
		t.Fatal("the header changed; update the test")
	}
	if err := CheckX86WordSizeFrames([]byte(bad), true); err == nil || !strings.Contains(err.Error(), "ARCH_INIT_USER_FP_ENTRY_FRAME(sizeof(int)) is {.cfa_off=8") {
		t.Errorf("wrong entry cfa_off: %v", err)
	}
}
