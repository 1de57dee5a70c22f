package verify

import "testing"

// TestUnusedMacroRegisterMap: a driver defines its register map whole:
// 6.12's cxgb3 vsc8211.c defines V_ACSR_ACTIPHY_TMR(x), an accessor of a
// field it never sets, and extcon-rtk-type-c.c decoders such as
// code_rp4pk(val) (((val) >> 22) & 0x1f) it never calls: no UNUSED_MACRO
// (17 warnings before, on the merged code of drivers/extcon too). Macros
// that compute otherwise are still reported (TestUnusedStatic's
// FOO_UNUSED_MACRO(x) ((x) + 1)).
func TestUnusedMacroRegisterMap(t *testing.T) {
	files := []string{"drivers/net/ethernet/chelsio/cxgb3/vsc8211.c", "drivers/extcon/extcon-rtk-type-c.c"}
	s := creationSeries(t, files, treeFiles(t, debianTree(t), files))
	if got := only(Run(s, Options{}), "UNUSED_MACRO"); len(got) != 0 {
		t.Errorf("UNUSED_MACRO on a register map: %v", got)
	}
}
