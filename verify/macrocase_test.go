package verify

import "testing"

// TestMacroCaseIsTheSeriesRule: coding-style.rst appreciates CAPITALIZED
// macro names and allows lower case for those resembling functions, so
// MACRO_CASE is this series' rule only: 6.12's drivers/gpu/drm/ast/ast_drv.h
// (AST_GEN(), IS_AST_GEN1() ...), created by a patch of another series,
// gets no MACRO_CASE (eight warnings telling its author to lower-case
// them before, on the merged code of drivers/gpu/drm/ast).
func TestMacroCaseIsTheSeriesRule(t *testing.T) {
	files := []string{"drivers/gpu/drm/ast/ast_drv.h"}
	s := creationSeries(t, files, treeFiles(t, debianTree(t), files))
	if got := only(Run(s, Options{}), "MACRO_CASE"); len(got) != 0 {
		t.Errorf("MACRO_CASE on a kernel series: %v", got)
	}
}
