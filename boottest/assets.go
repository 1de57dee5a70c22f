package boottest

import (
	"embed"
	"sync"

	"regexp"
)

// assets holds the driver and program sources that Run copies into the
// build directory.
//
//go:embed driver/kpatch_unwind_test.c driver/kpatch_unwind.h driver/Kconfig driver/Makefile prog/unwind_test.c prog/init.c
var assets embed.FS

func asset(name string) []byte {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic("missing embedded asset " + name)
	}
	return b
}

// DriverDir is where the driver goes in the kernel source tree.
const DriverDir = "kpatch_test"

// Modes are the KTAP subtests the programs print, one per task ABI, with
// the program that prints each.
var Modes = []struct{ Subtest, Program string }{
	{"unwind_x86_64", "unwind_test64"},
	{"unwind_ia32", "unwind_test32"},
}

var caseRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{ "([a-z0-9_]+)", case_[a-z0-9_]+[ ,]`) })

// Cases returns the names of the cases in the order the programs run them,
// read from the program's own table so the two cannot disagree.
func Cases() []string {
	var out []string
	for _, m := range caseRE().FindAllStringSubmatch(string(asset("prog/unwind_test.c")), -1) {
		out = append(out, m[1])
	}
	return out
}
