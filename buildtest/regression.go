package buildtest

// Regression reports whether the kernel test robot would call the run a
// BUILD REGRESSION, as WriteSummary's first line does: a patch fails in a
// configuration, or a patch adds an error or warning that the base did
// not have. kpatch test build --fail-on-new-warnings exits 1 on it.
func (r *Report) Regression() bool {
	return !r.Passed || len(r.findings()) > 0
}
