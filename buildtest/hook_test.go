package buildtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForcedOnly: a failure in x86_64 is in code only the test-only hook
// compiles when nothing of the tree that selects the symbol is on at that
// patch (v16's arch/Kconfig: HAVE_UNWIND_USER_FP selects UNWIND_USER, and
// before x86-enable-fp nothing selects HAVE_UNWIND_USER_FP).
func TestForcedOnly(t *testing.T) {
	src := t.TempDir()
	write := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("arch/Kconfig", "config UNWIND_USER\n\tbool\n\nconfig HAVE_UNWIND_USER_FP\n\tbool\n\tselect UNWIND_USER\n")
	write("arch/x86/Kconfig", "config X86_64\n\tdef_bool y\n\tselect ARCH_HAS_FOO\n")
	write(HookDir+"/Kconfig", HookKconfig)
	for _, c := range []struct {
		name   string
		config map[string]string
		want   string
	}{
		{"hook alone", map[string]string{HookSymbol: "y", "UNWIND_USER": "y"},
			"UNWIND_USER is on only because the test-only KPATCH_BUILD_UNWIND_USER selects it (of the symbols that select it, HAVE_UNWIND_USER_FP=n)"},
		{"the architecture selects it too", map[string]string{HookSymbol: "y", "UNWIND_USER": "y", "HAVE_UNWIND_USER_FP": "y"}, ""},
		{"no hook", map[string]string{"UNWIND_USER": "y"}, ""},
		{"symbol off", map[string]string{HookSymbol: "y"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := forcedOnly(src, c.config)
			if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, c.want) {
				t.Errorf("forcedOnly = %q, want %q", got, c.want)
			}
		})
	}
	// A tree no Kconfig of which selects the symbol says so.
	os.Remove(filepath.Join(src, "arch/Kconfig"))
	if got := forcedOnly(src, map[string]string{HookSymbol: "y", "UNWIND_USER": "y"}); !strings.Contains(got, "(nothing in the tree selects it)") {
		t.Errorf("without arch/Kconfig: %q", got)
	}
}
