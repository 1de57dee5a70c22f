package verify

import (
	"strings"
	"testing"

	"kpatch/plumbing/kernelsrc"
)

// TestIsEnabledOfAMacro: IS_ENABLED() of a macro that is defined is no
// mistake to fix with CONFIG_: 6.12's wireguard tests IS_ENABLED(DEBUG)
// (drivers/net/wireguard/allowedips.c, DEBUG from its Makefile's ccflags)
// and bcachefs IS_ENABLED(__KERNEL__) (fs/bcachefs/btree_iter.c), where
// CONFIG_DEBUG or CONFIG___KERNEL__ would turn running code into dead
// code. verify said "always false: write IS_ENABLED(CONFIG_DEBUG)"; it
// now says checkpatch's "is normally used as" and that the macro is
// tested, and "false" only of a name nothing defines.
func TestIsEnabledOfAMacro(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, line string
		false_     bool
	}{
		{"drivers/net/wireguard/allowedips.c", "IS_ENABLED(DEBUG)", false},
		{"fs/bcachefs/btree_iter.c", "IS_ENABLED(__KERNEL__)", false},
		{"kernel/sched/core.c", "IS_ENABLED(PREEMPT_LAZY)", true},
	} {
		t.Run(c.line, func(t *testing.T) {
			s := treeMail(t, tree, "x: test it", "Test it.", []string{c.path}, func(files map[string]string) {
				// a real use of the file, added once more at its end
				lines := strings.Split(files[c.path], "\n")
				use := "\tif (" + c.line + ")\n\t\treturn;\n"
				for _, l := range lines {
					if strings.Contains(l, c.line) {
						use = l
					}
				}
				files[c.path] += "\nstatic void __maybe_unused verify_test(void)\n{\n" + use + "\n}\n"
			})
			got := only(Run(s, Options{}), "IS_ENABLED_CONFIG")
			if len(got) != 1 {
				t.Fatalf("IS_ENABLED_CONFIG %v, want one", got)
			}
			m := got[0].Message
			if !strings.Contains(m, "is normally used as") || strings.Contains(m, "always false") || strings.Contains(m, "write IS_ENABLED(CONFIG_") {
				t.Errorf("message %q", m)
			}
			if strings.Contains(m, "is false") != c.false_ {
				t.Errorf("message %q: says false %v, want %v", m, !c.false_, c.false_)
			}
		})
	}
}
