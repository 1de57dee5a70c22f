package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"kpatch/plumbing/kernelsrc"
)

// TestCheckpatchCopiesNoPathOutside: verify --checkpatch on a plain tree
// lays the files a series patches into a temporary tree for
// checkpatch.pl. A mail naming ../../../x (which git refuses: "invalid
// path") made it read x beside the tree and write it beside $TMPDIR.
// Such a path is refused as the apply step refuses it, and nothing is
// written outside the temporary tree.
func TestCheckpatchCopiesNoPathOutside(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is not installed")
	}
	debian, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	tree := filepath.Join(base, "t1", "t2", "t3", "tree")
	for _, f := range append([]string{"Kconfig", "kernel/fork.c", "arch/x86/Kconfig"}, checkpatchRoot...) {
		c, err := debian.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(tree, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "t1", "x"), []byte("a file beside the tree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(base, "d1", "d2")
	os.MkdirAll(tmp, 0o755)
	t.Setenv("TMPDIR", tmp)
	mbox := filepath.Join(base, "outside.mbox")
	const mail = `From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A U Thor <author@example.org>
Date: Mon, 1 Jan 2024 00:00:00 +0000
Subject: [PATCH] x: change a file outside the tree

Change it.

Signed-off-by: A U Thor <author@example.org>
---
 ../../../x | 1 +
 1 file changed, 1 insertion(+)

diff --git a/../../../x b/../../../x
--- a/../../../x
+++ b/../../../x
@@ -1 +1,2 @@
 a file beside the tree
+a line
-- 
2.39.5

`
	if err := os.WriteFile(mbox, []byte(mail), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, err := kernelsrc.Open(tree, "", true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadMail(mbox, plain)
	if err != nil {
		t.Fatal(err)
	}
	own := Run(s, Options{})
	if len(only(own, "PATCH_APPLY")) == 0 {
		t.Errorf("no PATCH_APPLY for ../../../x: %v", own)
	}
	if _, err := Checkpatch(context.Background(), s, own, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(base, "d1", "x"), filepath.Join(base, "x")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("verify --checkpatch wrote %s, outside its temporary tree", p)
		}
	}
}
