package series_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/internal/seriestest"
	"kpatch/series"
)

// TestStackedX86Series generates the x86 series stacked on v16 (the spec's
// x86-v2 folder, Prerequisite: v16) and laid on v15 (--on v15): its two
// patches, numbered 1 and 2, change every file as v14's two x86 patches
// did (the code they carried into the separate posting; on v16, where it
// was posted), and on a tree where the prerequisite is applied with git am
// they apply with git am too, to the tree kpatch computed.
func TestStackedX86Series(t *testing.T) {
	dir := debianTree(t)
	ctx := context.Background()
	for _, tc := range []struct {
		on, prerequisite int
		name             string
	}{
		{0, 16, "x86 v2 on v16"},
		{15, 15, "x86 v2 on v15 (posted on v16)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x86, err := seriestest.Generate(ctx, seriestest.Options{Tree: dir, Base: "v6.12", Stack: "x86", Version: 2, On: tc.on})
			if err != nil {
				t.Fatal(err)
			}
			r := x86.Revision
			if len(x86.Patches) != 2 || r.Prerequisite == nil || r.Prerequisite.Version != tc.prerequisite || r.PostedOn.Version != 16 || r.Name() != tc.name {
				t.Fatalf("%d patches on %v, named %q", len(x86.Patches), r.Prerequisite, r.Name())
			}
			msgs := seriestest.Messages(t, x86)
			if !strings.Contains(msgs[0].Text, "Subject: [PATCH v2 0/2] x86: Enable the deferred unwinding infrastructure") ||
				!strings.Contains(msgs[1].Text, "Subject: [PATCH v2 1/2] unwind_user/x86: Enable frame pointer unwinding on x86") {
				t.Errorf("subjects:\n%s\n%s", lineStarting(msgs[0].Text, "Subject:"), lineStarting(msgs[1].Text, "Subject:"))
			}
			if n := strings.Count(msgs[0].Text, "\nprerequisite-patch-id: "); n != len(r.Prerequisite.Patches) {
				t.Errorf("the cover lists %d prerequisite patch ids, v%d has %d patches", n, tc.prerequisite, len(r.Prerequisite.Patches))
			}
			if tc.prerequisite == 16 {
				sameChangesAsV14(t, msgs)
			}
			if testing.Short() {
				return
			}
			pre, err := seriestest.Generate(ctx, seriestest.Options{Tree: dir, Base: "v6.12", Version: tc.prerequisite})
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			work := filepath.Join(out, "linux")
			run(t, out, "git", "clone", "-q", "--shared", "--no-checkout", dir, work)
			run(t, work, "git", "sparse-checkout", "set", "--no-cone", "/kernel/", "/include/", "/arch/x86/", "/arch/Kconfig", "/MAINTAINERS")
			run(t, work, "git", "checkout", "-q", "-b", "stacked", "v6.12")
			for i, s := range []*series.Series{pre, x86} { // in this order
				files, err := series.WriteDir(filepath.Join(out, fmt.Sprint(i)), seriestest.Messages(t, s))
				if err != nil {
					t.Fatal(err)
				}
				run(t, work, "git", append([]string{"am", "-q", "--whitespace=error-all"}, files[1:]...)...)
			}
			if n := strings.TrimSpace(run(t, work, "git", "rev-list", "--count", "v6.12..HEAD")); n != fmt.Sprint(len(pre.Patches)+2) {
				t.Errorf("git am applied %s commits, want %d", n, len(pre.Patches)+2)
			}
			if head := strings.TrimSpace(run(t, work, "git", "rev-parse", "HEAD^{tree}")); head != seriestest.TipTree(t, x86) {
				t.Errorf("git am tree %s, kpatch computed %s", head, seriestest.TipTree(t, x86))
			}
		})
	}
}

// sameChangesAsV14 checks that the x86 series' patches (msgs[1:]) add and
// remove the lines v14's patches 11 and 12 did (posted code).
func sameChangesAsV14(t *testing.T, msgs []series.Message) {
	t.Helper()
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
}

func lineStarting(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
