package buildtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// touched returns the files patch k changes; for the first patch built
// (From), the files patches 1..From change.
func (r *runner) touched(k int) []string {
	if k > 1 && k == r.o.From {
		var all []string
		seen := map[string]bool{}
		for j := 1; j <= k; j++ {
			for _, p := range r.st.touched[j] {
				if !seen[p] {
					seen[p] = true
					all = append(all, p)
				}
			}
		}
		return all
	}
	return r.st.touched[k]
}

// affected returns the objects patch k affects in this configuration.
func (r *runner) affected(ctx context.Context, k int, syms []string) ([]string, error) {
	touched := map[string]bool{}
	set := map[string]bool{}
	var newDirs []string
	for _, p := range r.touched(k) {
		touched["src:"+p] = true
		for _, pre := range []string{"include/asm-generic/", "arch/x86/include/asm/"} {
			if b, ok := strings.CutPrefix(p, pre); ok {
				touched["obj:arch/x86/include/generated/asm/"+b] = true
			}
		}
		if strings.HasSuffix(p, ".c") {
			if r.cmds[strings.TrimSuffix(p, ".c")+".o"] != nil {
				set[strings.TrimSuffix(p, ".c")+".o"] = true
			}
		}
	}
	symSet := map[string]bool{}
	for _, s := range syms {
		symSet[s] = true
	}
	// A .cmd may come from a later step of an earlier run (build trees are
	// reused), naming symbols the files do not use yet: as fixdep does,
	// count a symbol only if a dependency mentions it now.
	mentions := map[string]map[string]bool{} // dependency name -> symbol -> mentioned
	mentionedNow := func(name, sym string) bool {
		m, ok := mentions[name]
		if !ok {
			m = map[string]bool{}
			var path string
			switch kind, p, _ := strings.Cut(name, ":"); kind {
			case "src":
				path = filepath.Join(r.d.Src, p)
			case "obj":
				path = filepath.Join(r.d.Obj, p)
			case "abs":
				path = p
			}
			if b, err := os.ReadFile(path); err == nil && path != "" {
				for _, s := range syms {
					m[s] = bytes.Contains(b, []byte("CONFIG_"+s))
				}
			}
			mentions[name] = m
		}
		return m[sym]
	}
	for obj, c := range r.cmds {
		if set[obj] {
			continue
		}
		names, ok := r.names[obj]
		if !ok {
			names = depNames(c, r.d.Src, r.d.Obj)
			r.names[obj] = names
		}
		for _, s := range c.Config {
			if !symSet[s] {
				continue
			}
			for _, n := range names {
				if !strings.HasPrefix(n, "cfg:") && mentionedNow(n, s) {
					set[obj] = true
					break
				}
			}
			if set[obj] {
				break
			}
		}
		if set[obj] {
			continue
		}
		for _, n := range names {
			if touched[n] {
				set[obj] = true
				break
			}
		}
	}
	// Objects of the files the series creates, when this configuration
	// builds them (kbuild says, from the directory's Makefile and the
	// configuration at this step).
	// The object list comes from the build at the series' end, whose
	// configuration may build more of them than this step's does (in
	// x86_64-noia32 nothing selects the unwinder before x86-enable-fp):
	// an object of a created file that kbuild does not build now, or
	// whose file does not exist yet, is not compiled.
	created := map[string]bool{}
	for _, p := range r.st.s.Revision.Spec().CreatedFiles() {
		if strings.HasSuffix(p, ".c") {
			obj := strings.TrimSuffix(p, ".c") + ".o"
			delete(set, obj)
			if _, ok := r.st.at(p, k); ok {
				created[obj] = true
				newDirs = appendUnique(newDirs, filepath.Dir(p))
			}
		}
	}
	for _, dir := range newDirs {
		objs, err := r.enabledObjects(ctx, dir)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if created[o] {
				set[o] = true
			}
		}
	}
	return sortedKeys(set), nil
}

// enabledObjects asks kbuild which objects of dir this configuration
// builds into the kernel now.
func (r *runner) enabledObjects(ctx context.Context, dir string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "make", "-s", "-f", filepath.Join(r.d.Src, "scripts/Makefile.build"),
		"obj="+dir, "srctree="+r.d.Src, "objtree=.", "src="+filepath.Join(r.d.Src, dir), "srcroot="+r.d.Src,
		"--eval", "kpatch-objs: ; @echo $(real-obj-y) $(lib-y)", "kpatch-objs")
	cmd.Dir = r.d.Obj
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("listing the objects of %s: %v: %s", dir, err, out)
	}
	return strings.Fields(string(out)), nil
}
