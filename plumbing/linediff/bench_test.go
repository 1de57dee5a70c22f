package linediff

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
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
