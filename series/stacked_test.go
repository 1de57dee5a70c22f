package series_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/series"
)

// TestStackedX86Series generates the x86 series stacked on v16 (the spec's
// x86-v2 folder, Prerequisite: v16): its two patches, numbered 1 and 2,
// change every file as v14's two x86 patches did (the code they carried
// into the separate posting), and on a tree where v16 is applied with git
// am they apply with git am too, to the tree kpatch computed.
func TestStackedX86Series(t *testing.T) {
	dir := debianTree(t)
	ctx := context.Background()
	x86, err := series.Generate(ctx, series.Options{Tree: dir, Base: "v6.12", Stack: "x86", Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(x86.Patches) != 2 || x86.Revision.Prerequisite == nil || x86.Revision.Prerequisite.Version != 16 {
		t.Fatalf("%d patches on %v", len(x86.Patches), x86.Revision.Prerequisite)
	}
	msgs := x86.Messages()
	if !strings.Contains(msgs[0].Text, "Subject: [PATCH v2 0/2] x86: Enable the deferred unwinding infrastructure") ||
		!strings.Contains(msgs[1].Text, "Subject: [PATCH v2 1/2] unwind_user/x86: Enable frame pointer unwinding on x86") {
		t.Errorf("subjects:\n%s\n%s", lineStarting(msgs[0].Text, "Subject:"), lineStarting(msgs[1].Text, "Subject:"))
	}
	// The same changes as v14's patches 11 and 12 (posted code).
	v14 := readPostedPatches(t, postedDir(t, 14))[10:]
	for i, w := range v14 {
		body := msgs[i+1].Text
		got := map[string]*gitdiff.File{}
		for _, f := range parseFiles(t, body[strings.Index(body, "\ndiff --git ")+1:]) {
			got[f.NewName] = f
		}
		if len(got) != len(w.files) {
			t.Errorf("patch %d touches %d files, v14's %d", i+1, len(got), len(w.files))
		}
		for _, wf := range w.files {
			gf := got[wf.NewName]
			if gf == nil {
				t.Errorf("patch %d does not touch %s", i+1, wf.NewName)
				continue
			}
			gc, wc := changesOf(gf), changesOf(wf)
			if strings.Join(gc.added, "") != strings.Join(wc.added, "") || strings.Join(gc.deleted, "") != strings.Join(wc.deleted, "") {
				t.Errorf("patch %d %s: changed lines differ from v14's:\n got +%q -%q\nwant +%q -%q", i+1, wf.NewName, gc.added, gc.deleted, wc.added, wc.deleted)
			}
		}
	}
	if testing.Short() {
		return
	}
	v16, err := series.Generate(ctx, series.Options{Tree: dir, Base: "v6.12", Version: 16})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	work := filepath.Join(out, "linux")
	run(t, out, "git", "clone", "-q", "--shared", "--no-checkout", dir, work)
	run(t, work, "git", "sparse-checkout", "set", "--no-cone", "/kernel/", "/include/", "/arch/x86/", "/arch/Kconfig", "/MAINTAINERS")
	run(t, work, "git", "checkout", "-q", "-b", "stacked", "v6.12")
	for name, s := range map[string]*series.Series{"v16": v16} {
		files, err := series.WriteDir(filepath.Join(out, name), s.Messages())
		if err != nil {
			t.Fatal(err)
		}
		run(t, work, "git", append([]string{"am", "-q", "--whitespace=error-all"}, files[1:]...)...)
	}
	files, err := series.WriteDir(filepath.Join(out, "x86"), msgs)
	if err != nil {
		t.Fatal(err)
	}
	run(t, work, "git", append([]string{"am", "-q", "--whitespace=error-all"}, files[1:]...)...)
	if n := strings.TrimSpace(run(t, work, "git", "rev-list", "--count", "v6.12..HEAD")); n != fmt.Sprint(len(v16.Patches)+2) {
		t.Errorf("git am applied %s commits, want %d", n, len(v16.Patches)+2)
	}
	if head := strings.TrimSpace(run(t, work, "git", "rev-parse", "HEAD^{tree}")); head != x86.TipTree() {
		t.Errorf("git am tree %s, kpatch computed %s", head, x86.TipTree())
	}
}

func lineStarting(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
