package series_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/plumbing/kernelsrc"
	"kpatch/series"
)

// TestCheckDeps checks the dependencies the x86 series' cover letter
// names (base-commit and v16's ten prerequisite-patch-ids, generated on
// Debian 6.12), as b4 prep --check-deps does:
//   - with v16 below it, every one is found, each at its patch;
//   - with v15 below it instead (--on v15), the ids git patch-id --stable
//     gives v15's mails differently from v16's are missing, and only they;
//   - a base commit the tree lacks is missing;
//   - on a clone where v16 was committed (kpatch gen --branch) and with no
//     series below, each is found in the base's history, at the commit
//     git log lists for its patch.
func TestCheckDeps(t *testing.T) {
	dir := debianTree(t)
	ctx := context.Background()
	x86, err := seriestest.Generate(ctx, seriestest.Options{Tree: dir, Base: "v6.12", Stack: "x86", Version: 2, WithPrerequisite: true})
	if err != nil {
		t.Fatal(err)
	}
	cover := seriestest.Messages(t, x86.Own())[0].Text
	deps := series.ParseDeps(cover)
	if len(deps.PatchIDs) != 10 || deps.BaseCommit != x86.Tree.Commit.String() {
		t.Fatalf("deps %+v", deps)
	}

	t.Run("v16 below", func(t *testing.T) {
		got, err := series.CheckDeps(ctx, x86.Tree, deps, x86)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 11 || got[0].Found != "the tree" {
			t.Fatalf("%+v", got)
		}
		for i, d := range got[1:] {
			if !strings.HasPrefix(d.Found, "patch "+strconv.Itoa(i+1)+"/10 of v16 below it (") {
				t.Errorf("%s: %+v", d.Value, d)
			}
		}
	})

	t.Run("v15 below", func(t *testing.T) {
		on15, err := seriestest.Generate(ctx, seriestest.Options{Tree: dir, Base: "v6.12", Stack: "x86", Version: 2, On: 15, WithPrerequisite: true})
		if err != nil {
			t.Fatal(err)
		}
		// git's own patch ids of v15's mails, as kpatch gen writes them.
		v15, err := seriestest.Generate(ctx, seriestest.Options{Tree: dir, Base: "v6.12", Version: 15})
		if err != nil {
			t.Fatal(err)
		}
		gitIDs := map[string]bool{}
		for _, m := range seriestest.Messages(t, v15)[1:] {
			cmd := exec.Command("git", "patch-id", "--stable")
			cmd.Stdin = strings.NewReader(m.Text)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			gitIDs[strings.Fields(string(out))[0]] = true
		}
		got, err := series.CheckDeps(ctx, x86.Tree, deps, on15)
		if err != nil {
			t.Fatal(err)
		}
		missing := 0
		for _, d := range got[1:] {
			if (d.Missing == "") != gitIDs[d.Value] {
				t.Errorf("%s: %+v; git patch-id gives v15 this id: %v", d.Value, d, gitIDs[d.Value])
			}
			if d.Missing != "" {
				missing++
				if d.Missing != "neither in v6.12's history nor in v15 below it" {
					t.Errorf("%s: %q", d.Value, d.Missing)
				}
			} else if !strings.Contains(d.Found, " of v15 below it (") {
				t.Errorf("%s: %+v", d.Value, d)
			}
		}
		if missing == 0 {
			t.Error("v15 below x86 on v16: no prerequisite missing")
		}
		t.Logf("%d of v16's patches are not v15's", missing)
	})

	t.Run("unknown base commit", func(t *testing.T) {
		bad := deps
		bad.BaseCommit = strings.Repeat("0123", 10)
		got, err := series.CheckDeps(ctx, x86.Tree, bad, x86)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Found != "" || !strings.HasPrefix(got[0].Missing, "not in "+dir) {
			t.Errorf("%+v", got[0])
		}
	})

	t.Run("merged in the base", func(t *testing.T) {
		clone := filepath.Join(t.TempDir(), "linux.git")
		if out, err := exec.Command("git", "clone", "-q", "--bare", "--shared", dir, clone).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v: %s", err, out)
		}
		v16, err := seriestest.Generate(ctx, seriestest.Options{Tree: clone, Base: "v6.12", Version: 16})
		if err != nil {
			t.Fatal(err)
		}
		if err := v16.CreateBranch("merged16"); err != nil {
			t.Fatal(err)
		}
		tree, err := kernelsrc.OpenGit(clone, "merged16")
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("git", "-C", clone, "log", "--reverse", "--format=%H", "v6.12..merged16").Output()
		if err != nil {
			t.Fatal(err)
		}
		commits := strings.Fields(string(out))
		got, err := series.CheckDeps(ctx, tree, deps, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 11 || len(commits) != 10 {
			t.Fatalf("%d deps, %d commits", len(got), len(commits))
		}
		for i, d := range got[1:] {
			if d.Found != "the base's history as commit "+commits[i] {
				t.Errorf("%s: %+v, want commit %s", d.Value, d, commits[i])
			}
		}
		os.RemoveAll(clone)
	})
}
