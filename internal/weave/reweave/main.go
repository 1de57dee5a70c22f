// Command reweave rewrites the templates of a spec (templates/linux/files)
// from the history of every created file in every revision: the revisions
// given with -posted are read from their posted patches (git format-patch
// files, applied in order to an empty tree), those given with -states
// from a folder of each patch's files (DIR/NN/<path>), the others are
// rendered from the current templates. Every revision then renders exactly
// as before, as posted or as given.
//
//	go run ./internal/weave/reweave -spec templates/linux -posted 13=../shared/revisions/v13
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/internal/weave"
	"kpatch/spec"
)

func main() {
	specDir := flag.String("spec", "templates/linux", "the spec to rewrite")
	posted := weave.RevisionDirs{}
	flag.Var(posted, "posted", "N=DIR: revision N's posted patches, one file a patch in order (repeatable)")
	states := weave.RevisionDirs{}
	flag.Var(states, "states", "N=DIR: revision N's created files after each patch, as DIR/NN/<path> (repeatable)")
	flag.Parse()
	if err := run(*specDir, posted, states); err != nil {
		fmt.Fprintln(os.Stderr, "reweave:", err)
		os.Exit(1)
	}
}

func run(specDir string, posted, states map[int]string) error {
	sp, err := spec.Load(os.DirFS(specDir))
	if err != nil {
		return err
	}
	paths := map[string]bool{}
	for _, p := range sp.CreatedFiles() {
		paths[p] = true
	}
	// A series stacked on a revision continues its history: the weave of
	// that revision covers the stacked patches too (their guards see the
	// prerequisite's version), so that they render on it as given.
	extended := map[int]*spec.Revision{}
	for _, r := range sp.Revisions {
		extended[r.Version] = r
	}
	for _, st := range sp.Stacked {
		if prev := extended[st.Prerequisite.Version]; prev.Prerequisite != nil {
			// One history per revision: two series stacked on it
			// (x86-v2 and x86-6.19 on v16) are two branches, which a
			// weave of that revision's history cannot hold.
			return fmt.Errorf("%s and %s are both stacked on v%d: reweave weaves one history a revision, and would drop the first's lines", prev.Dir, st.Dir, st.Prerequisite.Version)
		}
		extended[st.Prerequisite.Version] = st
	}
	// history[v][path][step] is the file after step, absent before creation.
	history := map[int]map[string]map[int]string{}
	for _, r := range sp.Revisions {
		h := map[string]map[int]string{}
		history[r.Version] = h
		if dir, ok := posted[r.Version]; ok {
			if err := readPosted(dir, len(r.Patches), h, paths); err != nil {
				return fmt.Errorf("v%d: %w", r.Version, err)
			}
			continue
		}
		if dir, ok := states[r.Version]; ok {
			for step := 1; step <= len(extended[r.Version].Patches); step++ {
				for p := range paths {
					b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%02d", step), filepath.FromSlash(p)))
					if err != nil {
						continue
					}
					if h[p] == nil {
						h[p] = map[int]string{}
					}
					h[p][step] = string(b)
				}
			}
			continue
		}
		for p := range paths {
			if sp.Templates[p] == nil {
				continue
			}
			x := extended[r.Version]
			for step := 1; step <= len(x.Patches); step++ {
				b, ok, err := x.Render(p, step)
				if err != nil {
					return err
				}
				if ok {
					if h[p] == nil {
						h[p] = map[int]string{}
					}
					h[p][step] = string(b)
				}
			}
		}
	}
	var sorted []string
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	w := spec.NewWriter(specDir)
	for _, p := range sorted {
		var revs []weave.Rev
		for _, r := range sp.Revisions {
			wr := weave.Rev{Version: r.Version}
			for _, q := range extended[r.Version].Patches {
				wr.IDs = append(wr.IDs, q.ID)
				wr.Folded = append(wr.Folded, q.Folded...)
			}
			states := history[r.Version][p]
			for step := 1; step <= len(wr.IDs); step++ {
				c, ok := states[step]
				if !ok {
					if wr.Created != 0 {
						return fmt.Errorf("v%d: %s deleted after patch %d: not supported", r.Version, p, step)
					}
					continue
				}
				if wr.Created == 0 {
					wr.Created = step
				}
				wr.States = append(wr.States, c)
			}
			revs = append(revs, wr)
		}
		t, err := weave.Revisions(revs)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		w.SetTemplate(p, t)
	}
	return w.Write()
}

// readPosted applies the posted patches in dir, in name order, to an empty
// tree and records every created file after every step.
func readPosted(dir string, n int, h map[string]map[int]string, paths map[string]bool) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var files []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".patch") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	if len(files) != n {
		return fmt.Errorf("%s holds %d patches, the revision has %d", dir, len(files), n)
	}
	cur := map[string]string{}
	for i, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		diffs, _, err := gitdiff.Parse(fh)
		fh.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, d := range diffs {
			if d.IsNew {
				paths[d.NewName] = true
			}
			if !paths[d.NewName] {
				continue
			}
			var out bytes.Buffer
			if err := gitdiff.Apply(&out, strings.NewReader(cur[d.NewName]), d); err != nil {
				return fmt.Errorf("%s: %s: %w", f, d.NewName, err)
			}
			cur[d.NewName] = out.String()
		}
		for p, c := range cur {
			if h[p] == nil {
				h[p] = map[int]string{}
			}
			h[p][i+1] = c
		}
	}
	return nil
}
