package buildtest

import (
	"fmt"
	"sort"
	"strings"

	"kpatch/plumbing/kbuild"
)

// forcedOnly says, of a configuration built with the test-only hook on,
// whether the symbol the hook selects (HookSelects) is on only because of
// it at this step: no symbol of the tree that selects it is set in the
// configuration now (config, without the CONFIG_ prefix). The code it
// gates is then compiled here though no configuration of the tree
// compiles it yet, as UNWIND_USER before the x86 patches select
// HAVE_UNWIND_USER_FP. "" when the hook is off or nothing is forced.
func forcedOnly(src string, config map[string]string) string {
	if config[HookSymbol] != "y" || config[HookSelects] != "y" {
		return ""
	}
	var by []string
	for _, x := range kbuild.Selectors(src, HookSelects) {
		if x == HookSymbol {
			continue
		}
		v := config[x]
		if v == "y" || v == "m" {
			return ""
		}
		if v == "" {
			v = "n"
		}
		by = append(by, x+"="+v)
	}
	why := "nothing in the tree selects it"
	if len(by) > 0 {
		sort.Strings(by)
		why = "of the symbols that select it, " + strings.Join(by, ", ")
	}
	return fmt.Sprintf("%s is on only because the test-only %s selects it (%s): no configuration of the tree compiles what it gates at this patch", HookSelects, HookSymbol, why)
}
