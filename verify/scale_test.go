package verify

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scaleDirs is how many directories the scale series spreads its files
// over: each directory's Makefile is edited by one patch in scaleDirs.
const scaleDirs = 100

// scaleMbox is a series of n patches as git format-patch --stdout writes
// it: every patch creates a small C file (a static helper it uses, a
// function it exports, a comment) in one of scaleDirs directories and adds
// it to that directory's Makefile (which the directory's first patch
// creates), so that files are both created and edited along the series.
func scaleMbox(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		d := fmt.Sprintf("drivers/misc/scale/d%02d", i%scaleDirs)
		fmt.Fprintf(&b, "From %040x Mon Sep 17 00:00:00 2001\n", i)
		fmt.Fprintf(&b, "From: A U Thor <author@example.com>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n")
		fmt.Fprintf(&b, "Subject: [PATCH %d/%d] scale: add part %d\n\n", i, n, i)
		fmt.Fprintf(&b, "Add part %d of the scale driver, with its helper.\n\nSigned-off-by: A U Thor <author@example.com>\n---\n", i)
		if k := (i-1)/scaleDirs + 1; k == 1 { // the directory's k-th part
			fmt.Fprintf(&b, "diff --git a/%[1]s/Makefile b/%[1]s/Makefile\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%[1]s/Makefile\n@@ -0,0 +1,2 @@\n+# SPDX-License-Identifier: GPL-2.0\n+obj-y += part%[2]d.o\n", d, i)
		} else {
			fmt.Fprintf(&b, "diff --git a/%[1]s/Makefile b/%[1]s/Makefile\nindex 1111111..2222222 100644\n--- a/%[1]s/Makefile\n+++ b/%[1]s/Makefile\n@@ -%[2]d,0 +%[3]d,1 @@\n+obj-y += part%[4]d.o\n", d, k, k+1, i)
		}
		src := fmt.Sprintf(`// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>

/* part %[1]d keeps its count */
static int part%[1]d_count;

static int part%[1]d_next(int x)
{
	return x + part%[1]d_count;
}

int part%[1]d_step(int x)
{
	part%[1]d_count++;
	return part%[1]d_next(x);
}
EXPORT_SYMBOL_GPL(part%[1]d_step);
`, i)
		lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
		fmt.Fprintf(&b, "diff --git a/%[3]s/part%[1]d.c b/%[3]s/part%[1]d.c\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n+++ b/%[3]s/part%[1]d.c\n@@ -0,0 +1,%[2]d @@\n", i, len(lines), d)
		for _, l := range lines {
			b.WriteString("+" + l + "\n")
		}
		b.WriteString("-- \n2.39.5\n\n")
	}
	return b.String()
}

var scaleOut = flag.String("scale-mbox", "", "write a scale series of -scale-n patches to this file (for whole-process runs) and pass")
var scaleN = flag.Int("scale-n", 10000, "patches of the -scale-mbox series")

// TestScaleSeries: the scale series is read whole and verify finds nothing
// wrong in it but what it is (no error); with -scale-mbox it is written
// out for a whole-process run of kpatch verify.
func TestScaleSeries(t *testing.T) {
	n := 50
	if *scaleOut != "" {
		n = *scaleN
	}
	path := *scaleOut
	if path == "" {
		path = filepath.Join(t.TempDir(), "scale.mbox")
	}
	if err := os.WriteFile(path, []byte(scaleMbox(n)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadMail(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Patches) != n {
		t.Fatalf("%d patches, want %d", len(s.Patches), n)
	}
	for _, f := range Run(s, Options{}) {
		t.Errorf("patch %d %s %s: %s", f.Patch, f.ID, f.Where(), f.Message)
	}
}

// BenchmarkVerifyScale reads and checks series of 1,000 to 10,000 patches
// (scaleMbox): time and memory must grow linearly with the patches.
func BenchmarkVerifyScale(b *testing.B) {
	for _, n := range []int{1000, 2000, 4000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "scale.mbox")
			if err := os.WriteFile(path, []byte(scaleMbox(n)), 0o644); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				s, err := ReadMail(path, nil)
				if err != nil {
					b.Fatal(err)
				}
				Run(s, Options{})
			}
		})
	}
}
