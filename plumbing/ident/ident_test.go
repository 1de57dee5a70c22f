package ident_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/ident"
)

// TestParseAsGitAm reads From headers as the real git am does: the
// author it records for a patch mailed with that header (git mailinfo
// reads the name, git's ident.c trims it: "'X' via list" is recorded as
// "X' via list"). A header without an address gives git am no author
// (it refuses the patch) and ident.Parse none.
func TestParseAsGitAm(t *testing.T) {
	gittest.Require(t)
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	gittest.Run(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	froms := []string{
		"Ada Lovelace <ada@example.org>",
		`"Shawn O. Pearce" <spearce@example.com>`,
		`"Lovelace, Ada" <ada@example.org>`,
		`"Back\\slash \"Quote\"" <bq@example.org>`,
		"'Real Name' via kasan-dev <kasan-dev@googlegroups.com>",
		"\"'Real Name' via list\" <list@googlegroups.com>",
		"ada@example.org (Ada Lovelace)",
		"ada@example.org",
		"<ada@example.org>",
		"Ada Lovelace<ada@example.org>",
		"José Café <jose@example.com>",
		"O'Brien <ob@example.com>",
		"Name, Jr. <jr@example.org>",
		"...Dots... <dots@example.org>",
		"Jo <jo@example.org>",
		"J <j@example.org>",
		"Ada <ada@example.org.>",
		"Ada Lovelace <ada@example.org> (the countess)",
		"A Very Long Name That Goes On And On Beyond Sixty Bytes Of Text <long@example.org>",
		"  Spaced   Out  <spaced@example.org>  ",
	}
	// One mbox, one git am: patch i creates file i.
	var mbox strings.Builder
	for i, from := range froms {
		fmt.Fprintf(&mbox, "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"+
			"From: %s\nSubject: [PATCH] %d\n\nbody\n---\ndiff --git a/f%d b/f%d\nnew file mode 100644\n"+
			"--- /dev/null\n+++ b/f%d\n@@ -0,0 +1 @@\n+%d\n-- \n2.39.5\n\n", from, i, i, i, i, i)
	}
	path := filepath.Join(t.TempDir(), "froms.mbox")
	if err := os.WriteFile(path, []byte(mbox.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "am", "-q", path)
	cmd.Dir, cmd.Env = dir, gittest.Environ(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git am: %v\n%s", err, out)
	}
	who := strings.Split(strings.TrimSuffix(string(gittest.Run(t, dir, "log", "--reverse", "-z", "--format=%an%x00%ae", "main~"+fmt.Sprint(len(froms))+"..main")), "\x00"), "\x00")
	if len(who) != 2*len(froms) {
		t.Fatalf("git am recorded %d fields for %d patches", len(who), len(froms))
	}
	for i, from := range froms {
		name, addr, ok := ident.Parse(from)
		if !ok || name != who[2*i] || addr != who[2*i+1] {
			t.Errorf("%q: got %q <%s> (%v), git am %q <%s>", from, name, addr, ok, who[2*i], who[2*i+1])
		}
	}

	// Without an address git am finds no author.
	from := "Not <an address"
	cmd = exec.Command("git", "am", "-q")
	cmd.Dir, cmd.Env = dir, gittest.Environ(dir)
	cmd.Stdin = strings.NewReader("From: " + from + "\nSubject: [PATCH] x\n\nbody\n---\n" +
		"diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1 @@\n+g\n")
	out, err := cmd.CombinedOutput()
	exec.Command("git", "-C", dir, "am", "--abort").Run()
	if err == nil || !strings.Contains(string(out), "empty ident") {
		t.Errorf("git am of a From without an address: %v, %s", err, out)
	}
	if _, _, ok := ident.Parse(from); ok {
		t.Errorf("%q: ident.Parse finds an author, git am none", from)
	}
}
