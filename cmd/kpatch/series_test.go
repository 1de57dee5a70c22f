package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/oracle"
	"kpatch/plumbing/mail"
)

// TestSeriesDiffMatchesGitRangeDiff writes v11 and v12 with kpatch gen
// (directories, mboxes and branches of a clone) and compares kpatch series
// diff on every form of input with git range-diff on the branches: the
// dropped patch 13, the added USED bit patch, changed and identical ones.
func TestSeriesDiffMatchesGitRangeDiff(t *testing.T) {
	dir := debianTree(t)
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "linux")
	gitIn(t, tmp, "clone", "-q", "--shared", "--no-checkout", dir, clone)
	var stdout, stderr bytes.Buffer
	for _, v := range []string{"11", "12"} {
		if code := run([]string{"gen", "--tree", clone, "--base", "v6.12", "-v", v, "--branch", "v" + v, "-o", filepath.Join(tmp, "d"+v)}, &stdout, &stderr); code != 0 {
			t.Fatalf("gen -v %s: %s", v, stderr.String())
		}
		stdout.Reset()
		if code := run([]string{"gen", "--tree", clone, "--base", "v6.12", "-v", v, "--stdout"}, &stdout, &stderr); code != 0 {
			t.Fatalf("gen -v %s --stdout: %s", v, stderr.String())
		}
		os.WriteFile(filepath.Join(tmp, "v"+v+".mbox"), stdout.Bytes(), 0o644)
	}
	cmd := exec.Command("git", "-C", clone, "-c", "core.abbrev=12", "-c", "core.attributesFile="+filepath.Join(dir, ".gitattributes"),
		"range-diff", "--no-color", "v6.12..v11", "v6.12..v12")
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, new string }{
		{"directories", filepath.Join(tmp, "d11"), filepath.Join(tmp, "d12")},
		{"mboxes", filepath.Join(tmp, "v11.mbox"), filepath.Join(tmp, "v12.mbox")},
		{"revisions", "v11", "v12"},
		{"mixed", filepath.Join(tmp, "d11"), "v12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"series", "diff", "--tree", clone, "--base", "v6.12", tc.old, tc.new}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if out.String() != string(want) {
				t.Errorf("series diff differs from git range-diff:\n got:\n%s\nwant:\n%s", out.String(), want)
			}
		})
	}
	for _, marker := range []string{" = ", " ! ", " < ", " > "} {
		if !strings.Contains(string(want), marker) {
			t.Errorf("git's range-diff has no %q pair: the test compares too little", marker)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"series", "diff", filepath.Join(tmp, "nothing"), "v12"}, &out, &errb); code != 2 ||
		strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "give a directory of patches") {
		t.Errorf("missing input: exit %d, %q", code, errb.String())
	}
}

// TestSeriesImportSeed imports the posted v11 thread and compares it with
// the v11 kpatch generates on Debian's 6.12: the same 14 patches with the
// same subjects, authors, commit messages and notes, and the same added
// and removed lines in every file (the diffs differ only in the context and
// line numbers the base decides, and in the body of get_segment_base(),
// which 6.12 has in another form). A second import into the same
// directory is refused; the directory is left as it was.
func TestSeriesImportSeed(t *testing.T) {
	seedPath, err := oracle.SeedPath()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	imp := filepath.Join(tmp, "imported")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"series", "import", seedPath, "-o", imp}, &stdout, &stderr); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr.String())
	}
	if n := strings.Count(stdout.String(), "\n"); n != 15 {
		t.Errorf("import wrote %d files, want the cover letter and 14 patches", n)
	}
	gen := filepath.Join(tmp, "gen")
	if code := run([]string{"gen", "--tree", debianTree(t), "--base", "v6.12", "-v", "11", "-o", gen}, &stdout, &stderr); code != 0 {
		t.Fatalf("gen: %s", stderr.String())
	}
	got, err := mail.Load(imp)
	if err != nil {
		t.Fatal(err)
	}
	want, err := mail.Load(gen)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Patches) != 14 || len(want.Patches) != 14 || got.Version != 11 || got.Cover == nil {
		t.Fatalf("imported v%d with %d patches (cover %v), generated %d", got.Version, len(got.Patches), got.Cover != nil, len(want.Patches))
	}
	for i, g := range got.Patches {
		w := want.Patches[i]
		if g.Title != w.Title || g.Author != w.Author || g.Log != w.Log || g.Changelog != w.Changelog {
			t.Errorf("patch %d: imported %q by %q differs from the generated %q by %q (or its message or notes)", g.Number, g.Title, g.Author, w.Title, w.Author)
		}
		gc, wc := changedLines(g.Diff), changedLines(w.Diff)
		if g.Number == 13 {
			gc, wc = withoutBody(gc), withoutBody(wc)
		}
		if gc != wc {
			t.Errorf("patch %d: added or removed lines differ:\n got %q\nwant %q", g.Number, gc, wc)
		}
	}
	before, _ := os.ReadDir(imp)
	if code := run([]string{"series", "import", seedPath, "-o", imp}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "already exists") {
		t.Errorf("import into an existing directory: exit %d, %q", code, stderr.String())
	}
	if after, _ := os.ReadDir(imp); len(after) != len(before) {
		t.Error("the refused import changed the directory")
	}
}

// changedLines keeps the file headers and the added and removed lines.
func changedLines(diff string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(diff, "\n") {
		if strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// withoutBody drops the lines of the body of get_segment_base(), which
// patch 13 moves from the tree: they come from the base.
func withoutBody(lines string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.SplitAfter(lines, "\n") {
		body := strings.TrimLeft(l, "+-")
		if strings.Contains(body, "get_segment_base(unsigned int segment)") || strings.Contains(body, "segment_base_address(unsigned int segment)") {
			in = strings.HasSuffix(strings.TrimSpace(body), ")")
		}
		if in {
			if strings.TrimSpace(body) == "}" {
				in = false
			}
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// TestSeriesDiffStacks: a side may name a stacked series, NAME for its
// newest revision or NAME:vN; its own patches are compared, as git
// range-diff compares the branches gen --branch records. x86 v2 against
// what Linux 6.19 merged: Josh's x86 enabling pairs, the compat refusal
// is dropped, the fixes and perf are new.
func TestSeriesDiffStacks(t *testing.T) {
	dir := debianTree(t)
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "linux")
	gitIn(t, tmp, "clone", "-q", "--shared", "--no-checkout", dir, clone)
	var stdout, stderr bytes.Buffer
	for _, b := range []struct{ stack, v, branch string }{{"x86", "2", "x86v2"}, {"x86-6.19", "1", "x86-619"}} {
		if code := run([]string{"gen", "--tree", clone, "--base", "v6.12", "--stack", b.stack, "-v", b.v, "--branch", b.branch, "-o", filepath.Join(tmp, b.branch)}, &stdout, &stderr); code != 0 {
			t.Fatalf("gen --stack %s: %s", b.stack, stderr.String())
		}
	}
	cmd := exec.Command("git", "-C", clone, "-c", "core.abbrev=12", "-c", "core.attributesFile="+filepath.Join(dir, ".gitattributes"),
		"range-diff", "--no-color", "x86v2~2..x86v2", "x86-619~16..x86-619")
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, sides := range [][2]string{{"x86:v2", "x86-6.19"}, {"x86", "x86-6.19:v1"}} {
		var out, errb bytes.Buffer
		if code := run([]string{"series", "diff", "--tree", clone, "--base", "v6.12", sides[0], sides[1]}, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", sides, code, errb.String())
		}
		if out.String() != string(want) {
			t.Errorf("%v: series diff differs from git range-diff:\n got:\n%s\nwant:\n%s", sides, out.String(), want)
		}
	}
	for _, marker := range []string{" ! 12: ", "Do not defer stack tracing for compat tasks", " > 16: "} {
		if !strings.Contains(string(want), marker) {
			t.Errorf("git's range-diff has no %q: the test compares too little", marker)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"series", "diff", "--tree", clone, "--base", "v6.12", "x86:v9", "x86-6.19"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "it has v2") {
		t.Errorf("x86:v9: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"series", "diff", "--tree", clone, "--base", "v6.12", "x86:v0", "x86-6.19"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "revisions count from v1") {
		t.Errorf("x86:v0: exit %d, %q", code, errb.String())
	}
}
