package verify

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
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

// verifyAt returns where verify reports id on the mail at path: "file:line"
// for each finding (a mail line as "MAIL:n").
func verifyAt(t *testing.T, s *Series, fs []Finding, id string) []string {
	t.Helper()
	var out []string
	for _, f := range only(fs, id) {
		if p := s.Patch(f.Patch); p != nil && f.File == p.MailFile {
			out = append(out, fmt.Sprintf("%s:MAIL:%d", p.MailFile, f.Line-p.MailLine+1))
		} else {
			out = append(out, fmt.Sprintf("%s:%d", f.File, f.Line))
		}
	}
	sort.Strings(out)
	return out
}

// checkpatchAt returns where checkpatch.pl reports what verify's id is
// (checkpatchSame) on the mails of s, read from dir: "file:line" for an
// added line, "MAILFILE:MAIL:n" for a line of the message; for the rules
// reported once per patch, the patch's mail without a line.
func checkpatchAt(t *testing.T, s *Series, paths []string, id string) []string {
	t.Helper()
	reps := runCheckpatchFiles(t, paths)
	var out []string
	for i, p := range s.Patches {
		for typ, lines := range reps[paths[i]] {
			for _, n := range lines {
				if checkpatchSameType(typ, id) {
					if f, l, ok := p.treeLine(n); ok {
						out = append(out, fmt.Sprintf("%s:%d", f, l))
					} else {
						out = append(out, fmt.Sprintf("%s:MAIL:%d", p.MailFile, n))
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// checkpatchSameType reports whether checkpatch's type typ is verify's id
// for every message checkpatchSame knows (BAD_SIGN_OFF is several rules:
// the tests give mails where it is only the one).
func checkpatchSameType(typ, id string) bool {
	switch id {
	case "TRAILER_EMAIL":
		return typ == "BAD_SIGN_OFF"
	case "AUTHOR_SIGN_OFF":
		return typ == "NO_AUTHOR_SIGN_OFF" || typ == "MISSING_SIGN_OFF"
	}
	return typ == id
}

// TestCheckpatchRulesNative: the checkpatch.pl rules that catch real bugs
// run without --checkpatch, each where checkpatch.pl reports it on the same
// mails: IS_ENABLED_CONFIG on preempt-lazy 02 (IS_ENABLED(PREEMPT_LAZY),
// always false: patch 07 of the series fixes it), COMMIT_MESSAGE on the
// patches of openwrt-quilt and ovpn that have no description, BAD_FIXES_TAG
// and TRAILER_EMAIL on mails with every form checkpatch.pl tells apart.
func TestCheckpatchRulesNative(t *testing.T) {
	type tc struct {
		name  string
		id    string
		paths func(t *testing.T) (*Series, []string)
		least int // checkpatch.pl's findings: the case tests something
	}
	foreignPaths := func(name string, numbers ...int) func(t *testing.T) (*Series, []string) {
		return func(t *testing.T) (*Series, []string) {
			s, _ := foreign(t, name)
			var paths []string
			for _, p := range s.Patches {
				paths = append(paths, filepath.Join(foreignDir(t, name), p.MailFile))
			}
			return s, paths
		}
	}
	mailPaths := func(body string) func(t *testing.T) (*Series, []string) {
		return func(t *testing.T) (*Series, []string) {
			p := mailFile(t, "x: fix x", body, "drivers/x/x.c", "// SPDX-License-Identifier: GPL-2.0\nint x;\n")
			s, err := ReadMail(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s, []string{p}
		}
	}
	fixes := strings.Join([]string{
		"Fix the thing.",
		"",
		"Fixes: 0123456789ab (\"x: add x\")",
		"Fixes: 0123456789abc (\"x: add x\")",
		"Fixes: 0123456789 (\"x: add x\")",
		"Fixes: 0123456789AB (\"x: add x\")",
		"fixes: 0123456789ab (\"x: add x\")",
		"Fixes: 0123456789ab (x: add x)",
		"Fixes: 0123456789ab",
		"Fixes:  0123456789ab (\"x: add x\")",
		"Fixes: commit 0123456789ab (\"x: add x\")",
		"Signed-off-by: A U Thor <author@example.com>",
	}, "\n")
	emails := strings.Join([]string{
		"Fix the thing.",
		"",
		"Reported-by: Joe Smith joe@example.com",
		"Suggested-by: Joe Smith <joe@example.com",
		"Acked-by: joe@example.com",
		"Tested-by: <joe@example.com>",
		"Reviewed-by: Joe Smith",
		"Cc: stable@vger.kernel.org # 6.1+",
		"Cc: \"Smith, Joe\" <joe@example.com>",
		"Signed-off-by: A U Thor <author@example.com>",
	}, "\n")
	for _, c := range []tc{
		{"preempt-lazy", "IS_ENABLED_CONFIG", foreignPaths("preempt-lazy"), 1},
		{"openwrt-quilt", "COMMIT_MESSAGE", foreignPaths("openwrt-quilt"), 1},
		{"fixes", "BAD_FIXES_TAG", mailPaths(fixes), 8},
		{"emails", "TRAILER_EMAIL", mailPaths(emails), 3},
	} {
		t.Run(c.name+"/"+c.id, func(t *testing.T) {
			s, paths := c.paths(t)
			var fs []Finding
			if len(paths) == 1 && !strings.Contains(paths[0], "foreign-series") {
				fs = Run(s, Options{})
			} else {
				_, fs = foreign(t, c.name)
			}
			got, want := verifyAt(t, s, fs, c.id), checkpatchAt(t, s, paths, c.id)
			if c.id == "COMMIT_MESSAGE" { // once per patch, each at its own line
				got, want = mailsOf(got), mailsOf(want)
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("verify's %s at\n%s\ncheckpatch.pl's at\n%s", c.id, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if len(want) < c.least {
				t.Errorf("checkpatch.pl reports %v: the case tests less than it should", want)
			}
		})
	}
}

// mailsOf keeps the mail of each "MAILFILE:MAIL:n".
func mailsOf(at []string) []string {
	var out []string
	for _, a := range at {
		out = append(out, strings.SplitN(a, ":", 2)[0])
	}
	return out
}

// TestSeveritiesAsCheckpatch: each verify rule that checkpatch.pl also has
// has checkpatch's severity (ERROR an error, WARN a warning), read from the
// tree's scripts/checkpatch.pl itself.
func TestSeveritiesAsCheckpatch(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(debianTree(t), "scripts", "checkpatch.pl"))
	if err != nil {
		t.Fatal(err)
	}
	sev := map[string]Severity{}
	for _, r := range Rules() {
		sev[r.ID] = r.Severity
	}
	for _, c := range []struct{ rule, typ, msg string }{
		{"AUTHOR_SIGN_OFF", "NO_AUTHOR_SIGN_OFF", "Missing Signed-off-by: line by nominal patch author"},
		{"SENDER_SIGN_OFF", "FROM_SIGN_OFF_MISMATCH", "email address mismatch"},
		{"CO_DEVELOPED_BY", "BAD_SIGN_OFF", "Co-developed-by: must be immediately followed by Signed-off-by:"},
		{"DUPLICATE_SIGN_OFF", "BAD_SIGN_OFF", "Duplicate signature"},
		{"TRAILER_EMAIL", "BAD_SIGN_OFF", "Unrecognized email address"},
		{"SPELLING", "TYPO_SPELLING", "may be misspelled"},
		{"REPEATED_WORD", "REPEATED_WORD", "Possible repeated word"},
		{"LONG_LINE", "LONG_LINE", ""},
		{"TRAILING_WHITESPACE", "TRAILING_WHITESPACE", "trailing whitespace"},
		{"SPDX_LICENSE_TAG", "SPDX_LICENSE_TAG", "Missing or malformed SPDX-License-Identifier"},
		{"IS_ENABLED_CONFIG", "IS_ENABLED_CONFIG", "is normally used as"},
		{"COMMIT_MESSAGE", "COMMIT_MESSAGE", "Missing commit description"},
		{"BAD_FIXES_TAG", "BAD_FIXES_TAG", "Please use correct Fixes: style"},
	} {
		re := regexp.MustCompile(`\b(ERROR|WARN|CHK)\(\s*"` + c.typ + `",\s*(?:\$\w+\s*)?"[^"]*` + regexp.QuoteMeta(c.msg))
		m := re.FindSubmatch(src)
		if m == nil && c.msg == "" {
			m = regexp.MustCompile(`\b(ERROR|WARN|CHK)\(\s*\$?\w*\s*"?` + c.typ + `"`).FindSubmatch(src)
		}
		if m == nil {
			// the level chosen at run time: my $msg_level = \&WARN; (CHK
			// with --file) ... &{$msg_level}("TYPE", ...)
			m = runtimeLevel(src, c.typ)
		}
		if m == nil {
			t.Errorf("%s: scripts/checkpatch.pl has no %s %q", c.rule, c.typ, c.msg)
			continue
		}
		t.Logf("%s: checkpatch.pl's %s is %s", c.rule, c.typ, m[1])
		want := Warning
		if string(m[1]) == "ERROR" {
			want = Error
		}
		if sev[c.rule] != want {
			t.Errorf("%s is %s, checkpatch.pl's %s (%q) is %s", c.rule, sev[c.rule], c.typ, c.msg, m[1])
		}
	}
}

// TestCheckpatchTreeMode: with the tree, checkpatch.pl runs in tree mode
// and looks commit ids up in the tree's repository: hh-readahead 2's
// hexadecimal number, which it takes for a commit without the tree
// (GIT_COMMIT_ID, an error), is no commit there; the Debian tree has no
// history before v6.12, so what it would call unknown commits is left
// out, and the report says so.
func TestCheckpatchTreeMode(t *testing.T) {
	testenv.Tool(t, "perl", "perl")
	s, own := foreign(t, "hh-readahead")
	var paths []string
	for _, p := range s.Patches {
		paths = append(paths, filepath.Join(foreignDir(t, "hh-readahead"), p.MailFile))
	}
	noTree := 0
	for _, r := range runCheckpatchFiles(t, paths) {
		noTree += len(r["GIT_COMMIT_ID"])
	}
	if noTree == 0 {
		t.Fatal("checkpatch.pl --no-tree reports no GIT_COMMIT_ID on hh-readahead: the case tests nothing")
	}
	all, err := Checkpatch(context.Background(), s, own, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		if f.ID == "GIT_COMMIT_ID" || f.ID == "UNKNOWN_COMMIT_ID" {
			t.Errorf("%s in tree mode: %s %s", f.ID, f.Where(), f.Message)
		}
	}
	rep := NewReport(s, all)
	found := false
	for _, n := range rep.Notes {
		found = found || strings.Contains(n, "checkpatch.pl cannot look commits up (the tree has no history before v6.12): its UNKNOWN_COMMIT_ID")
	}
	if !found {
		t.Errorf("no note on the commits left out: %q", rep.Notes)
	}
}

// runtimeLevel returns, for a checkpatch.pl type reported through
// &{$msg_level}(...), the level the last "$msg_level = \&LEVEL;" before it
// sets (its --file CHK aside), as FindSubmatch would.
func runtimeLevel(src []byte, typ string) [][]byte {
	call := regexp.MustCompile(`&\{\$msg_level\}\(\s*(?:"` + typ + `"|\$msg_type)`)
	set := regexp.MustCompile(`msg_level = \\&(WARN|ERROR);`)
	for _, loc := range call.FindAllIndex(src, -1) {
		if typ == "LONG_LINE" || bytes.Contains(src[loc[0]:loc[1]], []byte(typ)) {
			before := src[max(0, loc[0]-400):loc[0]]
			if typ == "LONG_LINE" && !bytes.Contains(before, []byte(`show_type("LONG_LINE")`)) {
				continue
			}
			if ms := set.FindAllSubmatch(before, -1); len(ms) > 0 {
				return ms[len(ms)-1]
			}
		}
	}
	return nil
}

// TestCoccicheck: the tree's semantic patches on v16 (Coccinelle's spatch,
// full tier: about a minute of CPU): scripts/coccinelle's
// unsigned_lesser_than_zero.cocci reports v16's 'bit < 0' at the patch and
// line that add it, where TYPE_LIMITS reports it, so the two are merged;
// the report says what ran.
func TestCoccicheck(t *testing.T) {
	testenv.Full(t, "runs 73 semantic patches with spatch")
	testenv.Tool(t, "spatch", "coccinelle")
	g, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: debianTree(t), Base: "v6.12", Version: 16})
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromGenerated(g)
	if err != nil {
		t.Fatal(err)
	}
	own := Run(s, seriesOpts(t))
	tl := only(own, "TYPE_LIMITS")
	if len(tl) != 1 {
		t.Fatalf("TYPE_LIMITS on v16: %v", tl)
	}
	var without []Finding
	for _, f := range own {
		if f.ID != "TYPE_LIMITS" {
			without = append(without, f)
		}
	}
	all, err := Coccicheck(context.Background(), s, without, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := only(all, "COCCI_UNSIGNED_LESSER_THAN_ZERO")
	if len(got) != 1 || got[0].Patch != tl[0].Patch || got[0].File != tl[0].File || got[0].Line != tl[0].Line || got[0].Source != "coccinelle" {
		t.Errorf("coccinelle's report %+v, TYPE_LIMITS at %d %s", got, tl[0].Patch, tl[0].Where())
	}
	merged, err := Coccicheck(context.Background(), s, own, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(only(merged, "COCCI_UNSIGNED_LESSER_THAN_ZERO")); n != 0 {
		t.Errorf("%d coccinelle reports of what TYPE_LIMITS reports", n)
	}
	found := false
	for _, n := range NewReport(s, merged).Notes {
		found = found || strings.HasPrefix(n, "coccicheck: 73 semantic patches of scripts/coccinelle")
	}
	if !found {
		t.Errorf("notes %q", NewReport(s, merged).Notes)
	}
}
