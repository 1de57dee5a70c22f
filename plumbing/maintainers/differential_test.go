package maintainers

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/kerneltree"
)

// TestDifferential's -kpatch.cases is the number of get_maintainer.pl
// runs (0: one in -short mode, 40 otherwise); -kpatch.seed chooses the
// files.
var cases, seed = gittest.Cases, gittest.Seed

// stableScript writes get_maintainer.pl of tree with its ties between
// sections broken by file position (as Sections does) instead of Perl's
// random hash order, and returns its path.
func stableScript(t *testing.T, tree string) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(tree, "scripts/get_maintainer.pl"))
	if err != nil {
		t.Skipf("no get_maintainer.pl: %v", err)
	}
	const sortLine = "sort {$hash{$b} <=> $hash{$a}} keys %hash"
	if !bytes.Contains(script, []byte(sortLine)) {
		t.Fatalf("get_maintainer.pl has no %q to make deterministic", sortLine)
	}
	stable := bytes.Replace(script, []byte(sortLine), []byte("sort {$hash{$b} <=> $hash{$a} || $a <=> $b} keys %hash"), 1)
	p := filepath.Join(t.TempDir(), "get_maintainer.pl")
	if err := os.WriteFile(p, stable, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// treeFile parses dir's MAINTAINERS with dir's .mailmap and files, as
// get_maintainer.pl run in dir sees them.
func treeFile(t *testing.T, dir string) *File {
	t.Helper()
	m, err := os.ReadFile(filepath.Join(dir, "MAINTAINERS"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(bytes.NewReader(m))
	if err != nil {
		t.Fatal(err)
	}
	f.IsDir = func(name string) bool {
		fi, err := os.Stat(filepath.Join(dir, name))
		return err == nil && fi.IsDir()
	}
	f.ReadFile = func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	if mm, err := os.ReadFile(filepath.Join(dir, ".mailmap")); err == nil {
		f.Mailmap = ParseMailmap(mm)
	}
	return f
}

// TestDifferential compares Recipients with get_maintainer.pl --no-git
// --no-git-fallback on Debian 6.12's tree (its MAINTAINERS, its .mailmap,
// its files), for random but reproducible sets of files, half of them
// .yaml device-tree bindings whose addresses the script takes. Each
// get_maintainer.pl run costs about a second, so -short compares a few
// one run of 30 files (get_maintainer.pl needs about 0.1 s of CPU per
// file); -kpatch.cases=N runs N sets of one to four files.
func TestDifferential(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl not in PATH")
	}
	tree, err := kerneltree.Debian612(context.Background(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	script := stableScript(t, tree)
	out, err := exec.Command("git", "-C", tree, "ls-tree", "-r", "--name-only", "v6.12").Output()
	if err != nil {
		t.Skipf("listing the tree: %v", err)
	}
	var yaml, other []string
	for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasSuffix(p, ".yaml") {
			yaml = append(yaml, p)
		} else {
			other = append(other, p)
		}
	}
	f := treeFile(t, tree)
	// get_maintainer.pl asks git about every file when the tree is a git
	// repository (seconds each in the kernel's); run it in a tree of
	// links to the kernel's top-level entries, without .git.
	linked := t.TempDir()
	entries, err := os.ReadDir(tree)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(tree, e.Name()), filepath.Join(linked, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	runs, perRun := *cases, 4
	if runs == 0 {
		runs = 40
		if testing.Short() {
			runs, perRun = 1, 30
		}
	}
	r := rand.New(rand.NewPCG(*seed, 18))
	compared := 0
	for run := 0; run < runs; run++ {
		n := perRun
		if perRun <= 4 {
			n = 1 + r.IntN(perRun)
		}
		var paths []string
		seen := map[string]bool{}
		for len(paths) < n {
			p := other[r.IntN(len(other))]
			if r.IntN(2) == 0 {
				p = yaml[r.IntN(len(yaml))]
			}
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
		to, cc := f.Recipients(paths)
		wantTo, wantCc := getMaintainer(t, script, linked, paths)
		compared += len(paths)
		if !reflect.DeepEqual(to, wantTo) || !reflect.DeepEqual(cc, wantCc) {
			t.Errorf("seed %d run %d: Recipients(%q):\n to %q\n cc %q\nget_maintainer.pl:\n to %q\n cc %q",
				*seed, run, paths, to, cc, wantTo, wantCc)
		}
	}
	t.Logf("%d files in %d get_maintainer.pl runs", compared, runs)
}

// TestMailmapAndYAMLAgainstGetMaintainer runs get_maintainer.pl in a
// generated tree whose .mailmap has every form the script reads and whose
// .yaml files write addresses the odd ways bindings do.
func TestMailmapAndYAMLAgainstGetMaintainer(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl not in PATH")
	}
	kernel, err := kerneltree.Debian612(context.Background(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	script := stableScript(t, kernel)
	dir := t.TempDir()
	files := map[string]string{
		"MAINTAINERS": "INTRO\n\nONE\nM:\tOld Name <old@example.com>\nM:\tKeep Me <keep@example.com>\nL:\tlist@vger.kernel.org\nS:\tMaintained\nF:\tdrivers/one/\n\n" +
			"TWO\nM:\tWrong Addr <wrong@example.com>\nR:\tPaul E. McKenney <paulmck@old.example.org>\nM:\tCase <CASE@example.com>\nS:\tMaintained\nF:\tdrivers/two/\n\n" +
			"BINDINGS\nM:\tRob Herring <robh@example.org>\nL:\tdevicetree@vger.kernel.org\nS:\tMaintained\nF:\tDocumentation/bindings/\n",
		".mailmap": "# comment\nNew Name <old@example.com>\n<right@example.com> <wrong@example.com>\n" +
			"Paul E. McKenney <paulmck@kernel.org> <paulmck@old.example.org>\n" +
			"Real Person <real@example.com> Binding Author <author@example.com>\nLower <case@example.com>\n",
		"drivers/one/a.c":                         "",
		"drivers/two/b.c":                         "",
		"Documentation/bindings/x.yaml":           "title: X\nmaintainers:\n  - Binding Author <author@example.com>\n  - \"Dr. H. Peter Anvin\" <hpa@example.com>\n  - Jean-Luc O'Neil <jl@example.com>\n  - Rafał Miłecki <rafal@example.com>\ndescription: mail (someone@example.net) or {other@example.net}\n",
		"Documentation/bindings/y.yaml":           "maintainers:\n  - Keep Me <keep@example.com>\n  - A. B. C. D. Long Name, Jr. <long@example.com>\n",
		"Documentation/bindings/z.txt":            "maintainers: Not Taken <txt@example.com>\n",
		"Documentation/bindings/MAINTAINERS.yaml": "- Yaml Named <ym@example.com>\n",
	}
	for name, text := range files {
		touch(t, dir, name)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := treeFile(t, dir)
	for _, paths := range [][]string{
		{"drivers/one/a.c"},
		{"drivers/two/b.c"},
		{"Documentation/bindings/x.yaml"},
		{"Documentation/bindings/y.yaml"},
		{"Documentation/bindings/z.txt"},
		{"Documentation/bindings/MAINTAINERS.yaml"},
		{"drivers/one/a.c", "Documentation/bindings/y.yaml", "Documentation/bindings/x.yaml", "drivers/two/b.c"},
	} {
		t.Run(fmt.Sprint(paths), func(t *testing.T) {
			to, cc := f.Recipients(paths)
			wantTo, wantCc := getMaintainer(t, script, dir, paths)
			if !reflect.DeepEqual(to, wantTo) || !reflect.DeepEqual(cc, wantCc) {
				t.Errorf("Recipients(%q):\n to %q\n cc %q\nget_maintainer.pl:\n to %q\n cc %q", paths, to, cc, wantTo, wantCc)
			}
		})
	}
}
