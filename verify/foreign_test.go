package verify

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/kernelsrc"
)

// foreignFiles are real files of Linux 6.12 (the Debian tree) that use what
// made verify report false errors on other people's series: module_init()
// and module_exit(), kernel iterators (skb_list_walk_safe,
// hlist_for_each_entry_rcu, list_for_each_entry_safe), static functions
// used only through an ops table.
var foreignFiles = []string{
	"net/sched/sch_tbf.c",
	"net/ipv6/xfrm6_tunnel.c",
	"net/netfilter/ipvs/ip_vs_lblc.c",
	"net/ipv4/tcp_diag.c",
}

// foreignSeries makes, with the real git, a series of one patch per file of
// foreignFiles that creates it as the Debian tree has it (so every line is
// the kernel's own code), formats it with git format-patch and reads the
// mails as posted.
func foreignSeries(t *testing.T) *Series {
	t.Helper()
	gittest.Require(t)
	tree := debianTree(t)
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	gittest.Run(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	for _, f := range foreignFiles {
		b, err := os.ReadFile(filepath.Join(tree, f))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(repo, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, repo, "add", f)
		gittest.Run(t, repo, "commit", "-q", "-m", fmt.Sprintf("net: add %s\n\nAs Linux 6.12 has it.\n\nSigned-off-by: t <t@example.com>", filepath.Base(f)))
	}
	out := filepath.Join(t.TempDir(), "out")
	gittest.Run(t, repo, "format-patch", "-q", "-n", "-o", out, fmt.Sprintf("-%d", len(foreignFiles)))
	s, err := ReadMail(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestForeignKernelCode: on the kernel's own code verify reports no error
// (the kernel builds it without a warning), no finding of a series rule
// (the series declares none), and what cc/v4 cannot read once per
// definition.
func TestForeignKernelCode(t *testing.T) {
	s := foreignSeries(t)
	if len(s.Patches) != len(foreignFiles) {
		t.Fatalf("%d patches read, want %d", len(s.Patches), len(foreignFiles))
	}
	fs := Run(s, Options{})
	seen := map[string]bool{}
	for _, f := range fs {
		line, _ := textAt(s, f)
		if f.Severity == Error {
			t.Errorf("error on the kernel's own code: patch %d %s %s: %s [%q]", f.Patch, f.ID, f.Where(), f.Message, strings.TrimSpace(line))
		}
		if f.ID == "C_EVAL" {
			k := f.File + " " + strings.SplitN(f.Message, "(", 2)[0]
			if seen[k] {
				t.Errorf("C_EVAL twice for %s", k)
			}
			seen[k] = true
		}
	}
	var b strings.Builder
	NewReport(s, fs).WriteText(&b)
	t.Logf("report:\n%s", b.String())
}

// TestForeignEditOpsTable: an edit to an existing file of the tree that
// adds a static function and its use in an ops table the same patch
// changes (the kernel's own tbf_dump_class() of net/sched/sch_tbf.c,
// removed from the base and added back by the patch, made with the real
// git) is no UNUSED_STATIC: the table is not among the definitions cc/v4
// is given of an edited file, but the use is in the file.
func TestForeignEditOpsTable(t *testing.T) {
	gittest.Require(t)
	tree := debianTree(t)
	const file = "net/sched/sch_tbf.c"
	real, err := os.ReadFile(filepath.Join(tree, file))
	if err != nil {
		t.Fatal(err)
	}
	text := string(real)
	start := strings.Index(text, "static int tbf_dump_class(")
	end := start + strings.Index(text[start:], "\n}\n") + len("\n}\n\n")
	use := strings.Index(text, "\t.dump\t\t=\ttbf_dump_class,\n")
	if start < 0 || end < start || use < end {
		t.Fatalf("%s of the tree has no tbf_dump_class() used by tbf_class_ops", file)
	}
	base := text[:start] + text[end:use] + text[use+len("\t.dump\t\t=\ttbf_dump_class,\n"):]
	repo := t.TempDir()
	write := func(path, content string) {
		dst := filepath.Join(repo, path)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, marker := range []string{"MAINTAINERS", "Kconfig", "kernel/fork.c", "arch/x86/Kconfig"} {
		b, err := os.ReadFile(filepath.Join(tree, marker))
		if err != nil {
			t.Fatal(err)
		}
		write(marker, string(b))
	}
	write(file, base)
	gittest.Run(t, repo, "init", "-q")
	gittest.Run(t, repo, "add", ".")
	gittest.Run(t, repo, "commit", "-q", "-m", "base")
	gittest.Run(t, repo, "tag", "base")
	write(file, text)
	gittest.Run(t, repo, "commit", "-q", "-a", "-m", "net/sched: tbf: dump the class\n\nSigned-off-by: t <t@example.com>")
	out := filepath.Join(t.TempDir(), "out")
	gittest.Run(t, repo, "format-patch", "-q", "-o", out, "-1")
	kt, err := kernelsrc.Open(repo, "base", false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadMail(out, kt)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Patches) != 1 || !s.Patches[0].Files[0].Known {
		t.Fatalf("the patch was not applied to the base: %d patches", len(s.Patches))
	}
	fs := Run(s, Options{})
	for _, f := range fs {
		if f.Severity == Error {
			t.Errorf("%s %s: %s", f.ID, f.Where(), f.Message)
		}
	}
	// The check does see the function: without its use it is reported.
	gittest.Run(t, repo, "checkout", "-q", "-b", "unused", "base")
	write(file, text[:use]+text[use+len("\t.dump\t\t=\ttbf_dump_class,\n"):])
	gittest.Run(t, repo, "commit", "-q", "-a", "-m", "net/sched: tbf: add tbf_dump_class()\n\nSigned-off-by: t <t@example.com>")
	out2 := filepath.Join(t.TempDir(), "out")
	gittest.Run(t, repo, "format-patch", "-q", "-o", out2, "-1")
	s, err = ReadMail(out2, kt)
	if err != nil {
		t.Fatal(err)
	}
	got := only(Run(s, Options{}), "UNUSED_STATIC")
	if len(got) != 1 || !strings.Contains(got[0].Message, "tbf_dump_class()") {
		t.Errorf("UNUSED_STATIC without the use: %+v", got)
	}
}

// acceptedError is an error verify reports on a foreign series that a
// kernel reviewer would report too, and why.
type acceptedError struct {
	series, rule string
	patch        int
	file         string
	why          string
}

// acceptedErrors are the errors verify may report on the foreign series
// (../shared/foreign-series) read with the Debian 6.12 tree, PATCH_APPLY
// aside (TestForeignPatchApply, foreign_apply_test.go, holds it to git's
// verdicts). Each is reported exactly once, and nothing else is an error.
var acceptedErrors = []acceptedError{
	{"clearlinux-mbox", "AUTHOR_SIGN_OFF", 2, "clearlinux.mbox", noSignOff},
	{"clearlinux-mbox", "AUTHOR_SIGN_OFF", 3, "clearlinux.mbox", noSignOff},
	{"clearlinux-mbox", "AUTHOR_SIGN_OFF", 4, "clearlinux.mbox", noSignOff},
	{"clearlinux-mbox", "AUTHOR_SIGN_OFF", 5, "clearlinux.mbox", noSignOff},
	{"clearlinux-mbox", "AUTHOR_SIGN_OFF", 6, "clearlinux.mbox", noSignOff},
	{"clearlinux-mbox", "AUTHOR_SIGN_OFF", 8, "clearlinux.mbox", noSignOff},
	{"hh-misc", "TRAILER_EMAIL", 11, "workqueue-20241219-do-not-warn-when-cancelling-WQ_MEM_RECLAIM-work-from-WQ_MEM_RECLAIM-worker.patch",
		"\"Cc: Christian König <christian.koenig@amd.com\" lacks its \">\": checkpatch.pl 6.12 reports ERROR:BAD_SIGN_OFF \"Unrecognized email address\" on the same line"},
}

const noSignOff = "the patch has no Signed-off-by at all: no maintainer can take it without the author's DCO (checkpatch.pl: MISSING_SIGN_OFF, an error); Clear Linux carries it as a distribution patch, never posted"

// TestForeignNoFalseErrors: verify on every foreign series with the Debian
// 6.12 tree reports no error but the accepted ones (acceptedErrors, each
// with why a reviewer would report it too) and PATCH_APPLY. It writes the
// table of what verify reports on each series into docs/verify.md
// (-update-docs), and fails when the table there is not that. The fast
// tier leaves out ovpn and itmt-sched, which no other test reads (a
// second of CPU), and does not check the table.
func TestForeignNoFalseErrors(t *testing.T) {
	left := map[acceptedError]bool{}
	for _, a := range acceptedErrors {
		left[a] = true
	}
	var table strings.Builder
	table.WriteString("| series | patches | errors (PATCH_APPLY aside) | warnings (PATCH_ALREADY_APPLIED aside) |\n|---|---|---|---|\n")
	for _, fs := range testenv.ForeignSeries(t) {
		if testing.Short() && (fs.Name == "ovpn" || fs.Name == "itmt-sched") {
			continue
		}
		s, findings := foreign(t, fs.Name)
		counts := map[Severity]map[string]int{Error: {}, Warning: {}}
		for _, f := range findings {
			if f.ID != "PATCH_APPLY" && f.ID != "PATCH_ALREADY_APPLIED" {
				counts[f.Severity][f.ID]++
			}
			if f.Severity != Error || f.ID == "PATCH_APPLY" {
				continue
			}
			found := false
			for a := range left {
				if a.series == fs.Name && a.rule == f.ID && a.patch == f.Patch && a.file == f.File {
					delete(left, a)
					found = true
					break
				}
			}
			if !found {
				line, _ := textAt(s, f)
				t.Errorf("%s: an error not in the accepted table: patch %d %s %s: %s [%q]", fs.Name, f.Patch, f.ID, f.Where(), f.Message, strings.TrimSpace(line))
			}
		}
		list := func(m map[string]int) string {
			var parts []string
			for _, k := range sortedKeys(m) {
				parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
			}
			if len(parts) == 0 {
				return "none"
			}
			return strings.Join(parts, ", ")
		}
		fmt.Fprintf(&table, "| %s | %d | %s | %s |\n", fs.Name, len(s.Patches), list(counts[Error]), list(counts[Warning]))
	}
	for a := range left {
		t.Errorf("accepted error not reported: %s patch %d %s %s", a.series, a.patch, a.rule, a.file)
	}
	if !testing.Short() {
		docTable(t, "foreign-findings", table.String())
	}
}

// docTable checks that docs/verify.md has want between the markers of
// name, or writes it there with -update-docs.
func docTable(t *testing.T, name, want string) {
	t.Helper()
	b, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+":begin -->\n", "<!-- "+name+":end -->"
	i, j := bytes.Index(b, []byte(begin)), bytes.Index(b, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q markers", docsPath, begin, end)
	}
	if string(b[i+len(begin):j]) == want {
		return
	}
	if !*updateDocs {
		t.Fatalf("%s: the %s table is out of date: go test ./verify -run %s -update-docs", docsPath, name, t.Name())
	}
	out := append(append(append([]byte{}, b[:i+len(begin)]...), want...), b[j:]...)
	if err := os.WriteFile(docsPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
