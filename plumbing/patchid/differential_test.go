package patchid_test

import (
	"bytes"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/patchid"
)

// TestPatchIDDifferential compares PatchID with git patch-id --stable on
// random commits of real kernel files (bytes that are not UTF-8, form
// feeds, vertical tabs, carriage returns, renames, mode changes, new and
// deleted files, no final newline), every commit's diff as git log -p
// prints it. -kpatch.cases=N sets the number of commits.
func TestPatchIDDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(*gittest.Seed, 11))
	commits := gittest.CasesOr(200, 2000)
	h := gittest.Generate(t, r, gittest.KernelSources(t, r, 16), []string{"one"}, commits)
	log := gittest.Run(t, h.Dir, "log", "-p", "--no-color", "main..one")
	cmd := exec.Command("git", "patch-id", "--stable")
	cmd.Dir, cmd.Env, cmd.Stdin = h.Dir, gittest.Environ(h.Dir), bytes.NewReader(log)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // commit -> patch id
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			want[f[1]] = f[0]
		}
	}
	diffs := gittest.Run(t, h.Dir, "log", "-p", "--no-color", "--format=%x01%H", "main..one")
	compared := 0
	for _, chunk := range bytes.Split(diffs, []byte("\x01"))[1:] {
		id, diff, _ := bytes.Cut(chunk, []byte("\n"))
		w, ok := want[string(id)]
		if !ok {
			continue // no diff (git prints no id), as for a commit that changed nothing
		}
		compared++
		if got := patchid.Stable(string(diff)); got != w {
			t.Errorf("seed %d, commit %s: patch-id %s, git's %s", *gittest.Seed, id, got, w)
		}
	}
	if compared < commits*9/10 {
		t.Errorf("only %d of %d commits compared", compared, commits)
	}
	t.Logf("%d patch ids compared with git patch-id --stable", compared)
}
