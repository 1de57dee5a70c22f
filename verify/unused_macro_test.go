package verify

import "testing"

// TestUnusedMacroRegisterMap: a driver defines its register map whole:
// 6.12's cxgb3 vsc8211.c defines V_ACSR_ACTIPHY_TMR(x), an accessor of a
// field it never sets: no UNUSED_MACRO (a warning before). Macros that
// call code are still reported (the unused tests' cases).
func TestUnusedMacroRegisterMap(t *testing.T) {
	files := []string{"drivers/net/ethernet/chelsio/cxgb3/vsc8211.c"}
	s := creationSeries(t, files, treeFiles(t, debianTree(t), files))
	if got := only(Run(s, Options{}), "UNUSED_MACRO"); len(got) != 0 {
		t.Errorf("UNUSED_MACRO on a register map: %v", got)
	}
}
