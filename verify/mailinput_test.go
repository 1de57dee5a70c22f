package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/kernelsrc"
)

// TestCheckpatchMailWithoutFromLine: a patch saved without its leading
// "From <sha>" line (as a mailer saves it; git am takes it) gets from
// --checkpatch exactly the findings the tree's checkpatch.pl gives on the
// same file, and the same as with the line: its mail headers (Message-Id,
// a folded Subject, MIME, To) are a header, not commit message (they were,
// and a folded subject gave COMMIT_LOG_LONG_LINE).
func TestCheckpatchMailWithoutFromLine(t *testing.T) {
	gittest.Require(t)
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	src := filepath.Join(repo, "drivers", "misc")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "kp.c"), []byte("// SPDX-License-Identifier: GPL-2.0\n#include <linux/module.h>\n\nint kp_value;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "add", ".")
	gittest.Run(t, repo, "commit", "-q", "--author", "Jöhn Dœ <john@example.org>", "-m",
		"misc: kp: add a value that the driver reads when it probes, with a subject long enough to fold\n\nAdd kp_value, a value for the test.\n\nSigned-off-by: Jöhn Dœ <john@example.org>\n")
	withFrom := string(gittest.Run(t, repo, "format-patch", "-1", "--stdout", "--thread", "--to", "Linux Kernel <linux-kernel@vger.kernel.org>"))
	_, noFrom, _ := strings.Cut(withFrom, "\n")
	dir := t.TempDir()
	files := map[string]string{"with-from.patch": withFrom, "no-from.patch": noFrom}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// checkpatch.pl itself, as verify runs it.
	cp := filepath.Join(t.TempDir(), "scripts")
	if err := os.MkdirAll(cp, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"checkpatch.pl", "spelling.txt", "const_structs.checkpatch"} {
		c, err := tree.ReadFile("scripts/" + f)
		if err == nil {
			err = os.WriteFile(filepath.Join(cp, f), c, 0o644)
		}
		if err != nil && f == "checkpatch.pl" {
			t.Fatal(err)
		}
	}
	typeRE := regexp.MustCompile(`(?m)^[^:]+:\d+: (?:ERROR|WARNING|CHECK):([A-Z0-9_]+):`)
	direct := func(name string) []string {
		cmd := exec.Command("perl", filepath.Join(cp, "checkpatch.pl"), "--no-tree", "--no-color", "--terse", "--show-types", "--no-summary", name)
		cmd.Dir = dir
		out, _ := cmd.Output() // exit 1 on findings
		var ids []string
		for _, m := range typeRE.FindAllStringSubmatch(string(out), -1) {
			ids = append(ids, m[1])
		}
		sort.Strings(ids)
		return ids
	}
	viaVerify := func(name string) []string {
		s, err := ReadMail(filepath.Join(dir, name), tree)
		if err != nil {
			t.Fatal(err)
		}
		all, err := Checkpatch(context.Background(), s, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, f := range all {
			if f.Source == "checkpatch" {
				ids = append(ids, f.ID)
			}
		}
		sort.Strings(ids)
		return ids
	}
	want := direct("no-from.patch")
	if w := direct("with-from.patch"); strings.Join(w, " ") != strings.Join(want, " ") {
		t.Fatalf("checkpatch.pl itself: %v with the From line, %v without", w, want)
	}
	for name := range files {
		if got := viaVerify(name); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: verify --checkpatch gives %v, checkpatch.pl %v", name, got, want)
		}
	}
}
