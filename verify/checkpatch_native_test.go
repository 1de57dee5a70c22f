package verify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// The rules verify shares with checkpatch.pl, each tested against the
// real checkpatch.pl of the Debian tree on the same mail: verify reports
// a line exactly where checkpatch does.

// cpReport is what checkpatch.pl --terse --show-types says of one mail:
// type -> the mail's lines it reports it at.
type cpReport map[string][]int

var cpLineRE = regexp.MustCompile(`^([^:]+):(\d+): (?:ERROR|WARNING|CHECK):([A-Z0-9_]+):`)

// runCheckpatchPL runs the Debian tree's scripts/checkpatch.pl on the mail
// file path as a maintainer does (no tree, every message type).
func runCheckpatchPL(t *testing.T, path string) cpReport {
	t.Helper()
	return runCheckpatchFiles(t, []string{path})[path]
}

// runCheckpatchFiles is runCheckpatchPL on several mails, in one run.
func runCheckpatchFiles(t *testing.T, paths []string) map[string]cpReport {
	t.Helper()
	perl := testenv.Tool(t, "perl", "perl")
	script := filepath.Join(debianTree(t), "scripts", "checkpatch.pl")
	cmd := exec.Command(perl, append([]string{script, "--no-tree", "--no-color", "--terse", "--show-types", "--no-summary"}, paths...)...)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("checkpatch.pl: %v", err)
	}
	reps := map[string]cpReport{}
	for _, p := range paths {
		reps[p] = cpReport{}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := cpLineRE.FindStringSubmatch(sc.Text()); m != nil && reps[m[1]] != nil {
			var n int
			fmt.Sscan(m[2], &n)
			reps[m[1]][m[3]] = append(reps[m[1]][m[3]], n)
		}
	}
	return reps
}

// mailFile writes a one-patch mail, as git format-patch writes it, with
// the commit message body and a patch that creates path with content, and
// returns its path.
func mailFile(t *testing.T, subject, body, path, content string) string {
	t.Helper()
	var diff strings.Builder
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	fmt.Fprintf(&diff, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", path, path, path, len(lines))
	for _, l := range lines {
		diff.WriteString("+" + l + "\n")
	}
	mail := "From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n" +
		"From: A U Thor <author@example.com>\nDate: Mon, 2 Dec 2024 10:00:00 +0000\n" +
		"Subject: [PATCH] " + subject + "\n\n" + body + "\n---\n " + path + " | " + fmt.Sprint(len(lines)) + " +\n\n" +
		diff.String() + "-- \n2.39.5\n\n"
	p := filepath.Join(t.TempDir(), "0001-test.patch")
	if err := os.WriteFile(p, []byte(mail), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// verifyLines runs verify on the mail at path (no tree) and returns the
// mail lines it reports id at.
func verifyLines(t *testing.T, path, id string) []int {
	t.Helper()
	s, err := ReadMail(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range only(Run(s, Options{}), id) {
		if f.File == s.Patches[0].MailFile {
			out = append(out, f.Line)
		}
	}
	sort.Ints(out)
	return out
}

// treeBlock returns the lines of the Debian tree's file from the first
// line containing from, n lines, each indented with prefix.
func treeBlock(t *testing.T, file, from string, n int, prefix string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(debianTree(t), file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.Contains(l, from) {
			var out []string
			for _, x := range lines[i:min(i+n, len(lines))] {
				out = append(out, prefix+strings.TrimLeft(x, "\t "))
			}
			return strings.Join(out, "\n")
		}
	}
	t.Fatalf("%s has no %q", file, from)
	return ""
}

// TestRepeatedWordAsCheckpatch: a commit message with doubled words in
// prose (the real ones of hh-btrfs and v11, a hexadecimal word checkpatch
// still checks, words it does not) and three pasted blocks of the kernel's
// own documentation (a KASAN report with its shadow dump, an oops, a
// memory-barriers diagram): verify's REPEATED_WORD is checkpatch.pl's, line
// for line, and neither reports the pasted blocks.
func TestRepeatedWordAsCheckpatch(t *testing.T) {
	kasan := treeBlock(t, "Documentation/dev-tools/kasan.rst", "Memory state around the buggy address:", 8, "  ")
	oops := treeBlock(t, "Documentation/admin-guide/bug-hunting.rst", "------------[ cut here ]------------", 14, "\t")
	diagram := treeBlock(t, "Documentation/memory-barriers.txt", "CPU 1                               CPU 2", 7, "\t")
	body := strings.Join([]string{
		"The inode got deleted by by the cleaner kthread when the abort happened.",
		"Return 1 if the the callback was already queued.",
		"This may be be wrong, and we add add a check (checkpatch checks these).",
		"A long long value, a struct page page, the counters fa fa and ff ff.",
		"The value that that function returns is used.",
		"",
		"KASAN reports:",
		"",
		kasan,
		"",
		"The warning was:",
		"",
		oops,
		"",
		"As the barriers order it:",
		"",
		diagram,
		"",
		"Signed-off-by: A U Thor <author@example.com>",
	}, "\n")
	path := mailFile(t, "mm: fix the the race", body, "Documentation/x.txt", "Some text.\n")
	cp := runCheckpatchPL(t, path)
	got := verifyLines(t, path, "REPEATED_WORD")
	want := append([]int(nil), cp["REPEATED_WORD"]...)
	sort.Ints(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("REPEATED_WORD at mail lines %v, checkpatch.pl at %v", got, want)
	}
	if len(want) < 4 {
		t.Errorf("checkpatch.pl found only %v: the test's doubled words are not what it checks", want)
	}
	// the old rule reported the dump's "fc fc" and "fb fb"; none of the
	// lines reported is in a pasted block
	mail, _ := os.ReadFile(path)
	lines := strings.Split(string(mail), "\n")
	for _, n := range got {
		if l := lines[n-1]; pastedLine(l) {
			t.Errorf("REPEATED_WORD on a pasted line %d: %q", n, l)
		}
	}
}

// TestRepeatedWordReal: the doubled word of hh-btrfs 1 is still found.
func TestRepeatedWordReal(t *testing.T) {
	s, fs := foreign(t, "hh-btrfs")
	got := inPatch(fs, "REPEATED_WORD", 1)
	if len(got) != 1 || !strings.Contains(got[0].Message, `the word "by" is repeated`) {
		t.Errorf("hh-btrfs 1: %v", got)
	}
	_ = s
}

// TestSpellingAsCheckpatch: on the commit messages of four foreign series
// verify's SPELLING is checkpatch.pl's TYPO_SPELLING (both read the tree's
// scripts/spelling.txt), line for line, but for the lines a message pastes
// (pastedLine).
func TestSpellingAsCheckpatch(t *testing.T) {
	testenv.Full(t, "runs checkpatch.pl on 33 patches")
	for _, name := range []string{"hh-block", "preempt-lazy", "futex2", "hh-btrfs"} {
		s, fs := foreign(t, name)
		var paths []string
		for _, p := range s.Patches {
			paths = append(paths, filepath.Join(foreignDir(t, name), p.MailFile))
		}
		reps := runCheckpatchFiles(t, paths)
		for i, p := range s.Patches {
			mail, err := os.ReadFile(paths[i])
			if err != nil {
				t.Fatal(err)
			}
			end := p.line("\n---\n") + 1 // the commit message ends at "---"
			lines := strings.Split(string(mail), "\n")
			inLog := func(n int) bool { return n < end && n >= 1 && !pastedLine(lines[n-1]) }
			var want, got []int
			for _, n := range reps[paths[i]]["TYPO_SPELLING"] {
				if inLog(n) {
					want = append(want, n)
				}
			}
			for _, f := range inPatch(fs, "SPELLING", p.Number) {
				if f.File == p.MailFile && inLog(f.Line) {
					got = append(got, f.Line)
				}
			}
			sort.Ints(want)
			sort.Ints(got)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s %s: SPELLING at %v, checkpatch.pl's TYPO_SPELLING at %v", name, p.MailFile, got, want)
			}
		}
	}
}

// TestSpellingKernelWords: the words the kernel uses that codespell's
// dictionary "corrects" (hh-block's "inflight", preempt-lazy's
// "reenable") are not reported; the real misspellings still are (futex2's
// "extention", hh-btrfs's "metdata").
func TestSpellingKernelWords(t *testing.T) {
	found := map[string]bool{}
	for _, name := range []string{"hh-block", "preempt-lazy", "futex2", "hh-btrfs"} {
		_, fs := foreign(t, name)
		for _, f := range only(fs, "SPELLING") {
			found[strings.SplitN(f.Message, `"`, 3)[1]] = true
		}
	}
	for _, w := range []string{"inflight", "reenable"} {
		if found[w] {
			t.Errorf("%q, a word the kernel uses, is reported as misspelled", w)
		}
	}
	for _, w := range []string{"extention", "metdata"} {
		if !found[w] {
			t.Errorf("%q is not reported: %v", w, found)
		}
	}
}

// foreignDir is the folder of the foreign series name.
func foreignDir(t *testing.T, name string) string {
	t.Helper()
	for _, f := range testenv.ForeignSeries(t) {
		if f.Name == name {
			return f.Path
		}
	}
	t.Fatalf("no foreign series %s", name)
	return ""
}

// multiMail writes a one-patch mail that creates each of files (path ->
// content, in path order), as git format-patch writes it.
func multiMail(t *testing.T, subject, body string, files map[string]string) string {
	t.Helper()
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var diff, stat strings.Builder
	for _, p := range paths {
		lines := strings.Split(strings.TrimSuffix(files[p], "\n"), "\n")
		fmt.Fprintf(&stat, " %s | %d +\n", p, len(lines))
		fmt.Fprintf(&diff, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", p, p, p, len(lines))
		for _, l := range lines {
			diff.WriteString("+" + l + "\n")
		}
	}
	mail := "From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n" +
		"From: A U Thor <author@example.com>\nDate: Mon, 2 Dec 2024 10:00:00 +0000\n" +
		"Subject: [PATCH] " + subject + "\n\n" + body + "\n---\n" + stat.String() + "\n" + diff.String() + "-- \n2.39.5\n\n"
	p := filepath.Join(t.TempDir(), "0001-test.patch")
	if err := os.WriteFile(p, []byte(mail), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// codeLines returns, for checkpatch.pl's lines of id in the mail at path,
// the file:line of the tree they are (added lines), sorted.
func codeLines(t *testing.T, s *Series, cp cpReport, id string) []string {
	t.Helper()
	var out []string
	for _, n := range cp[id] {
		if f, l, ok := s.Patches[0].treeLine(n); ok {
			out = append(out, fmt.Sprintf("%s:%d", f, l))
		}
	}
	sort.Strings(out)
	return out
}

// TestSPDXAsCheckpatch: new files of every kind checkpatch.pl knows, with
// and without their SPDX line, in and out of their comment style, and
// files it asks none of (a Documentation/ABI entry, a selftest's config,
// .gitignore, a Makefile, Kconfig): verify's SPDX_LICENSE_TAG is at the
// lines checkpatch.pl reports, and only there.
func TestSPDXAsCheckpatch(t *testing.T) {
	files := map[string]string{
		"Documentation/ABI/testing/sysfs-x":        "What:\t\t/sys/x\nDescription:\tx\n",
		"tools/testing/selftests/x/config":         "CONFIG_X=y\n",
		"tools/testing/selftests/x/.gitignore":     "x_test\n",
		"drivers/x/Makefile":                       "obj-y += x.o\n",
		"drivers/x/Kconfig":                        "config X\n\tbool \"x\"\n",
		"drivers/x/a.c":                            "#include <linux/x.h>\n",
		"drivers/x/b.c":                            "/* SPDX-License-Identifier: GPL-2.0 */\n#include <linux/x.h>\n",
		"drivers/x/c.c":                            "// SPDX-License-Identifier: GPL-2.0\n",
		"drivers/x/d.h":                            "// SPDX-License-Identifier: GPL-2.0\n",
		"drivers/x/e.h":                            "/* SPDX-License-Identifier: GPL-2.0 */\n",
		"drivers/x/f.S":                            "#include <linux/x.h>\n",
		"tools/testing/selftests/x/g.sh":           "#!/bin/sh\n# SPDX-License-Identifier: GPL-2.0\necho x\n",
		"tools/testing/selftests/x/h.sh":           "#!/bin/sh\necho x\n",
		"tools/x/i.py":                             "print(1)\n",
		"Documentation/x/j.rst":                    ".. SPDX-License-Identifier: GPL-2.0\n\nX\n",
		"Documentation/x/k.rst":                    "X\n=\n",
		"Documentation/devicetree/bindings/l.yaml": "# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)\n%YAML 1.2\n",
		"drivers/x/m.c":                            "// SPDX-License-Identifier: GPL-2.0\n#include <linux/x.h>\n// SPDX-License-Identifier: MIT\n",
	}
	path := multiMail(t, "x: add x", "Add x.\n\nSigned-off-by: A U Thor <author@example.com>", files)
	cp := runCheckpatchPL(t, path)
	s, err := ReadMail(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := codeLines(t, s, cp, "SPDX_LICENSE_TAG")
	var got []string
	for _, f := range only(Run(s, Options{}), "SPDX_LICENSE_TAG") {
		got = append(got, fmt.Sprintf("%s:%d", f.File, f.Line))
	}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("SPDX_LICENSE_TAG at\n%s\ncheckpatch.pl at\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	t.Logf("checkpatch.pl: %v", want)
	if len(want) < 6 {
		t.Errorf("checkpatch.pl reports only %v", want)
	}
}
