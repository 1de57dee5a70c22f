package linediff

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// kernelTarball is the Debian linux-source package's tarball; when it is
// installed, real kernel sources make a realistic corpus.
const kernelTarball = "/usr/src/linux-source-6.12.tar.xz"

// kernelAttributes is the Linux kernel's top-level .gitattributes.
const kernelAttributes = "*.[ch] diff=cpp\n*.dts diff=dts\n*.dts[io] diff=dts\n*.rs diff=rust\n"

// kernelMembers are the parts of the tarball the corpus is drawn from.
var kernelMembers = []string{
	"linux-source-6.12/kernel/*.c",
	"linux-source-6.12/mm/*.c",
	"linux-source-6.12/include/linux/s*.h",
	"linux-source-6.12/arch/x86/Kconfig",
	"linux-source-6.12/MAINTAINERS",
	"linux-source-6.12/arch/arm64/boot/dts/arm/*.dts*",
	"linux-source-6.12/rust/kernel/*.rs",
}

// kernelCorpus extracts kernelMembers once into a cache directory under
// the system temporary directory and returns the files, relative to the
// source root. It skips the test when the tarball is not installed.
func kernelCorpus(t *testing.T) (root string, files []string) {
	t.Helper()
	if _, err := os.Stat(kernelTarball); err != nil {
		t.Skipf("%s not installed", kernelTarball)
	}
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("tar not in PATH")
	}
	cache := filepath.Join(os.TempDir(), "kpatch-linediff-kernel-6.12")
	root = filepath.Join(cache, "linux-source-6.12")
	marker := filepath.Join(cache, ".complete")
	if _, err := os.Stat(marker); err != nil {
		os.RemoveAll(cache)
		if err := os.MkdirAll(cache, 0o755); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"-xJf", kernelTarball, "-C", cache, "--wildcards"}, kernelMembers...)
		if out, err := exec.Command("tar", args...).CombinedOutput(); err != nil {
			t.Fatalf("extracting kernel sources: %v\n%s", err, out)
		}
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Skip("no kernel sources extracted")
	}
	return root, files
}

// TestKernelCorpusAgainstGit diffs random mutations of real kernel files,
// and pairs of unrelated kernel files, with git using the kernel's
// .gitattributes, so hunk headers come from the cpp, dts and rust
// drivers.
func TestKernelCorpusAgainstGit(t *testing.T) {
	requireGit(t)
	root, files := kernelCorpus(t)
	r := rand.New(rand.NewPCG(11, 12))

	want := 80
	if testing.Short() {
		want = 20
	}
	step := max(len(files)/want, 1)
	// Every step-th file, and all that are not C sources (every fourth
	// of them under -short: TestDifferential also edits kernel files).
	var picked []string
	for i, f := range files {
		if i%step == 0 || !strings.HasSuffix(f, ".c") && (!testing.Short() || i%4 == 0) {
			picked = append(picked, f)
		}
	}
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}

	var cases []gitCase
	for _, f := range picked {
		data := read(f)
		if bytes.IndexByte(data, 0) >= 0 {
			continue
		}
		for v := 0; v < 3; v++ {
			edits := []int{3, 10, 60}[v]
			cases = append(cases, gitCase{name: fmt.Sprintf("v%d/%s", v, f), old: data, new: mutate(r, data, edits)})
		}
	}
	// Unrelated files of the same directory: large edit costs.
	for i := 0; i+1 < len(picked) && i < 2*want; i += 7 {
		a, b := picked[i], picked[i+1]
		cases = append(cases, gitCase{name: fmt.Sprintf("x%d/%s", i, b), old: read(a), new: read(b)})
	}
	driver := func(name string) FuncNameFunc { return DriverFuncName(KernelDriver(name)) }
	n := compareWithGit(t, cases, kernelAttributes, DefaultOptions(), driver)
	// Without context git also trims the common tail of large files
	// before diffing them.
	n += compareWithGit(t, cases, kernelAttributes, Options{Context: 0}, driver, "-U0")
	t.Logf("%d kernel cases (%d files) compared with git", n, len(picked))
}
