package series_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/series"
)

// BenchmarkGenerate measures kpatch gen's work in process, for every
// revision and the x86 series stacked on v16: read the Debian 6.12 tree
// from its git objects, render and place the patches, diff, format the
// mail and write the files, as git format-patch does in
// BenchmarkGitFormatPatch (v11).
func BenchmarkGenerate(b *testing.B) {
	dir := benchTree(b)
	for _, c := range []struct {
		name    string
		version int
		stack   string
	}{{"v11", 11, ""}, {"v12", 12, ""}, {"v13", 13, ""}, {"v14", 14, ""}, {"v15", 15, ""}, {"v16", 16, ""}, {"x86-v2", 2, "x86"}} {
		b.Run(c.name, func(b *testing.B) {
			out := b.TempDir()
			want := 0
			for i := 0; i < b.N; i++ {
				s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "v6.12", Version: c.version, Stack: c.stack})
				if err != nil {
					b.Fatal(err)
				}
				files, err := series.WriteDir(out, seriestest.Messages(b, s))
				if want == 0 {
					want = len(s.Patches) + 1
				}
				if err != nil || len(files) != want {
					b.Fatalf("wrote %d files, want %d: %v", len(files), want, err)
				}
			}
		})
	}
}

// BenchmarkGitFormatPatch measures git format-patch --cover-letter --thread
// -v 11 writing the same 14 patches from a branch of the same repository
// (the branch kpatch gen --branch records). scripts/bench-gen.sh compares
// the two as whole processes, start-up included.
func BenchmarkGitFormatPatch(b *testing.B) {
	dir := benchTree(b)
	clone := filepath.Join(b.TempDir(), "linux")
	if out, err := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", dir, clone).CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: clone, Base: "v6.12", Version: 11})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.CreateBranch("bench"); err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("git", "-C", clone, "format-patch", "-q", "--cover-letter", "--thread", "-v", "11",
			"--base=v6.12", "-o", out, "v6.12..bench")
		if o, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, o)
		}
	}
	b.StopTimer()
	if ents, _ := os.ReadDir(out); len(ents) != 15 {
		b.Fatalf("git wrote %d files", len(ents))
	}
}

func benchTree(b *testing.B) string {
	b.Helper()
	return testenv.KernelTree(b)
}

// BenchmarkRangeDiff measures the range-diff from v11 to v12 (both already
// generated): what kpatch gen --range-diff 11 and kpatch series diff add.
// Compare with git range-diff on the two branches in BenchmarkGitRangeDiff.
func BenchmarkRangeDiff(b *testing.B) {
	dir := benchTree(b)
	s11, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "v6.12", Version: 11})
	if err != nil {
		b.Fatal(err)
	}
	s12, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "v6.12", Version: 12})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if out := seriestest.RangeDiff(b, s11, s12); len(out) == 0 {
			b.Fatal("empty range-diff")
		}
	}
}

// BenchmarkGitRangeDiff measures git range-diff v6.12..v11 v6.12..v12 on the
// branches kpatch gen --branch records.
func BenchmarkGitRangeDiff(b *testing.B) {
	dir := benchTree(b)
	clone := filepath.Join(b.TempDir(), "linux")
	if out, err := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", dir, clone).CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	for _, v := range []int{11, 12} {
		s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: clone, Base: "v6.12", Version: v})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.CreateBranch(fmt.Sprintf("v%d", v)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if o, err := exec.Command("git", "-C", clone, "range-diff", "--no-color", "v6.12..v11", "v6.12..v12").CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, o)
		}
	}
}
