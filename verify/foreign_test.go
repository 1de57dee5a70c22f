package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
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
