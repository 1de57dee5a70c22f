package series

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"kpatch/plumbing/kernelsrc"
)

// Deps are the dependencies a cover letter names, as git format-patch
// --base and b4 write them below the diffstat: the commit the series
// applies on and the patches it needs between that commit and its first
// patch.
type Deps struct {
	BaseCommit string   // base-commit:
	PatchIDs   []string // prerequisite-patch-id:, in order
	ChangeIDs  []string // prerequisite-change-id: (b4's; resolved through the archive)
}

// ParseDeps reads the dependency lines of a cover letter.
func ParseDeps(text string) Deps {
	var d Deps
	for _, l := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ": ")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "base-commit":
			d.BaseCommit = v
		case "prerequisite-patch-id":
			d.PatchIDs = append(d.PatchIDs, v)
		case "prerequisite-change-id":
			d.ChangeIDs = append(d.ChangeIDs, v)
		}
	}
	return d
}

// Dep is what CheckDeps found of one dependency.
type Dep struct {
	Kind  string `json:"kind"`  // "base-commit", "prerequisite-patch-id", "prerequisite-change-id"
	Value string `json:"value"` // the commit, patch id or change id
	// Found says where it is ("" when it is missing): "the tree", "the
	// base's history as commit SHA", "patch m/n of vN below it (title)".
	Found string `json:"found,omitempty"`
	// Missing says why it is not found ("" when it is).
	Missing string `json:"missing,omitempty"`
}

// historyDepth is how many commits of the base's history that touch the
// prerequisite's files CheckDeps reads for its patch ids.
const historyDepth = 5000

// CheckDeps checks the dependencies d against tree as b4 prep --check-deps
// does: the base commit is in the tree's repository, and each prerequisite
// patch id is among the patches of below (the series the dependent one is
// stacked on, generated: its prerequisites come first, Revision.Own of
// them) or among the commits of the base's history that touch the files
// those patches touch (git log -p | git patch-id --stable), where a
// prerequisite that was merged is. b4's prerequisite-change-id is resolved
// through the archive, which kpatch does not read: it is reported as not
// checked.
func CheckDeps(ctx context.Context, tree *kernelsrc.Tree, d Deps, below *Series) ([]Dep, error) {
	var out []Dep
	if d.BaseCommit != "" {
		dep := Dep{Kind: "base-commit", Value: d.BaseCommit}
		switch {
		case !tree.IsGit():
			dep.Missing = fmt.Sprintf("%s is a plain directory, which has no commits: give a git tree", tree.Dir)
		default:
			if _, err := kernelsrc.OpenGit(tree.Dir, d.BaseCommit); err == nil {
				dep.Found = "the tree"
			} else if errors.Is(err, kernelsrc.ErrUnknownRev) {
				dep.Missing = fmt.Sprintf("not in %s: fetch the tree it was made on", tree.Dir)
			} else {
				return nil, err
			}
		}
		out = append(out, dep)
	}
	belowIDs := map[string]string{}
	belowName := ""
	var paths []string
	seen := map[string]bool{}
	if below != nil {
		r := below.Revision
		n := r.Own
		if n == 0 {
			n = len(below.Patches) // a main series given as the one below
		}
		name := r.Name()
		if r.Prerequisite != nil {
			name = r.Prerequisite.Name()
		}
		belowName = name
		for _, p := range below.Patches[:n] {
			belowIDs[below.PatchID(p)] = fmt.Sprintf("patch %d/%d of %s below it (%s)", p.Number, n, name, p.Subject)
			for _, f := range p.Files {
				if !seen[f.Path] {
					seen[f.Path] = true
					paths = append(paths, f.Path)
				}
			}
		}
	}
	var history map[string]string
	for _, id := range d.PatchIDs {
		dep := Dep{Kind: "prerequisite-patch-id", Value: id}
		if where, ok := belowIDs[id]; ok {
			dep.Found = where
			out = append(out, dep)
			continue
		}
		if history == nil && tree.IsGit() {
			var err error
			if history, err = historyPatchIDs(ctx, tree.Dir, tree.Commit.String(), paths); err != nil {
				return nil, err
			}
		}
		if c, ok := history[id]; ok {
			dep.Found = "the base's history as commit " + c
		} else {
			dep.Missing = fmt.Sprintf("neither in %s's history", tree.Base)
			if below != nil {
				dep.Missing += " nor in " + belowName + " below it"
			}
		}
		out = append(out, dep)
	}
	for _, id := range d.ChangeIDs {
		out = append(out, Dep{Kind: "prerequisite-change-id", Value: id, Missing: "not checked: kpatch does not read the archive b4 resolves change ids through"})
	}
	return out, nil
}

// historyPatchIDs returns the patch ids (git patch-id --stable) of the
// commits of base's history that touch paths (all its commits when paths
// is empty), at most historyDepth, by patch id. A root commit (a tree
// imported whole, as Debian's) is no patch of a series: it is passed by.
func historyPatchIDs(ctx context.Context, dir, base string, paths []string) (map[string]string, error) {
	args := []string{"-C", dir, "log", "-p", "--no-merges", "--min-parents=1", "--no-color", "--no-ext-diff", "--format=commit %H", fmt.Sprintf("-n%d", historyDepth), base}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	logCmd := exec.CommandContext(ctx, "git", args...)
	idCmd := exec.CommandContext(ctx, "git", "-C", dir, "patch-id", "--stable")
	pipe, err := logCmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	idCmd.Stdin = pipe
	var out, stderr bytes.Buffer
	idCmd.Stdout = &out
	logCmd.Stderr, idCmd.Stderr = &stderr, &stderr
	if err := logCmd.Start(); err != nil {
		return nil, err
	}
	if err := idCmd.Run(); err != nil {
		logCmd.Wait()
		return nil, fmt.Errorf("git patch-id in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	if err := logCmd.Wait(); err != nil {
		return nil, fmt.Errorf("git log in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	ids := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 {
			ids[f[0]] = f[1]
		}
	}
	return ids, nil
}
