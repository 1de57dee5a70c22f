package linux_test

import (
	"strings"
	"testing"

	"kpatch/spec"
	"kpatch/templates/linux"
	"kpatch/unwind"
)

// TestFrameLayoutMatchesWalker renders the x86 unwind_user.h template of
// every revision after its last patch and checks that the frames its
// ARCH_INIT_USER_*FP_FRAME macros describe are the ones package unwind
// walks with: one source of truth for the frame layout.
func TestFrameLayoutMatchesWalker(t *testing.T) {
	s, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range s.Revisions {
		hdr, ok, err := r.Render("arch/x86/include/asm/unwind_user.h", len(r.Patches))
		if err != nil {
			t.Fatalf("v%d: render: %v", r.Version, err)
		}
		if !ok {
			continue // v15 on: the x86 patches are a series of their own
		}
		checked++
		// Revisions with the compat patch describe both frames; v14 on
		// dropped compat unwinding and must not describe a compat frame.
		check := unwind.CheckX86Frame64
		for _, p := range r.Patches {
			if p.ID == "x86-compat-fp" {
				check = unwind.CheckX86Frames
			}
		}
		if err := check(hdr); err != nil {
			t.Errorf("v%d: %v", r.Version, err)
		}
		// The check must be able to fail: a wrong ra_off is caught.
		bad := strings.Replace(string(hdr), "* -1,", "* -2,", 1)
		if bad == string(hdr) {
			t.Fatalf("v%d: the header has no \"* -1,\" to break", r.Version)
		}
		if err := check([]byte(bad)); err == nil {
			t.Errorf("v%d: a wrong ra_off passed the check", r.Version)
		}
	}
	if checked < 4 {
		t.Errorf("checked the x86 header of %d revisions, want v11 to v14", checked)
	}
}
