package verify

import (
	"sync"
	"testing"
)

// resetCaches forgets the tree's Kconfig symbols and spelling list, so
// that every run reads them as the first run of a process does.
func resetCaches() {
	kconfigCache = sync.Map{}
	spellingOnce = sync.Map{}
}

// BenchmarkVerify runs every rule on v11 generated on Debian 6.12: all 14
// patches, the C checks on x86_64 and i386 with the options on and off,
// the tree's Kconfig files and spelling list read afresh each time.
func BenchmarkVerify(b *testing.B) {
	s := v11Generated(b)
	for b.Loop() {
		resetCaches()
		if fs := Run(s, seriesOpts(b)); len(fs) == 0 {
			b.Fatal("no findings on v11")
		}
	}
}

// BenchmarkVerifyWarm is BenchmarkVerify with the Kconfig symbols and
// spelling list of the tree already read (a second verify in one process).
func BenchmarkVerifyWarm(b *testing.B) {
	s := v11Generated(b)
	Run(s, seriesOpts(b))
	for b.Loop() {
		if fs := Run(s, seriesOpts(b)); len(fs) == 0 {
			b.Fatal("no findings on v11")
		}
	}
}
