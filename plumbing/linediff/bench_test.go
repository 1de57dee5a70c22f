package linediff

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"kpatch/plumbing/cache"
)

// benchPair returns a large generated C file (about 10,000 lines) and a
// copy with a handful of scattered edits.
func benchPair() (old, new []byte) {
	r := rand.New(rand.NewPCG(42, 43))
	old = genCFile(r, 900)
	new = mutate(r, old, 12)
	return old, new
}

// BenchmarkUnified diffs a large C file against a lightly edited copy,
// the typical shape of a kernel patch.
func BenchmarkUnified(b *testing.B) {
	old, new := benchPair()
	b.SetBytes(int64(len(old) + len(new)))
	b.ReportAllocs()
	for b.Loop() {
		Unified(old, new)
	}
}

// BenchmarkUnifiedHeavy diffs two unrelated large files, where the Myers
// search runs into its cost limits.
func BenchmarkUnifiedHeavy(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	old, new := genCFile(r, 400), genCFile(r, 400)
	b.SetBytes(int64(len(old) + len(new)))
	b.ReportAllocs()
	for b.Loop() {
		Unified(old, new)
	}
}

// BenchmarkUnifiedKernel diffs mm/page_alloc.c of Linux 6.12 against an
// edited copy, when the kernel corpus of the tests has been extracted.
func BenchmarkUnifiedKernel(b *testing.B) {
	p := filepath.Join(os.TempDir(), "kpatch-linediff-kernel-6.12", "linux-source-6.12", "mm", "page_alloc.c")
	old, err := os.ReadFile(p)
	if err != nil {
		b.Skip("kernel corpus not extracted (run TestKernelCorpusAgainstGit first)")
	}
	new := mutate(rand.New(rand.NewPCG(1, 2)), old, 12)
	b.SetBytes(int64(len(old) + len(new)))
	b.ReportAllocs()
	for b.Loop() {
		Unified(old, new)
	}
}

// BenchmarkUnifiedMaintainers diffs the MAINTAINERS file of the cached
// Debian 6.12 tree (25,000 lines) against a copy with one section added
// in its middle, as the series' MAINTAINERS patch changes it: the common
// prefix and suffix are nearly the whole file.
func BenchmarkUnifiedMaintainers(b *testing.B) {
	dir, err := cache.Dir()
	if err != nil {
		b.Skip(err)
	}
	old, err := os.ReadFile(filepath.Join(dir, "linux-6.12", "MAINTAINERS"))
	if err != nil {
		b.Skip("the cached kernel tree is not there (kpatch tree makes it)")
	}
	at := bytes.Index(old, []byte("\nUSB ACM DRIVER\n")) + 1
	section := []byte("UNWIND INFRASTRUCTURE\nM:\tSomeone <someone@example.org>\nS:\tMaintained\nF:\tkernel/unwind/\n\n")
	new := append(append(append([]byte{}, old[:at]...), section...), old[at:]...)
	b.SetBytes(int64(len(old) + len(new)))
	b.ReportAllocs()
	for b.Loop() {
		UnifiedWith(old, new, KernelOptions("MAINTAINERS"))
	}
}
