package buildtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kpatch/plumbing/kbuild"
)

// cellVersion changes when what a step's cell holds changes (a field or
// how it is derived from the objects' results), so that remembered steps
// are derived again; the objects' results stay cached.
const cellVersion = 7 // 7: a cell says whether its step linked vmlinux

// stepKey hashes everything a step's result depends on.
func (r *runner) stepKey(k int, overlay map[string][]byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%d\x00", cellVersion, r.baseKey, k)
	for _, p := range sortedKeys(overlay) {
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(overlay[p]))
		h.Write(overlay[p])
	}
	for _, p := range r.touched(k) {
		fmt.Fprintf(h, "touched %s\x00", p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// val is the current content of a dependency name.
func (r *runner) val(n string) string {
	kind, p, _ := strings.Cut(n, ":")
	switch kind {
	case "src":
		return r.hasher.sum(filepath.Join(r.d.Src, p))
	case "obj":
		return r.hasher.sum(filepath.Join(r.d.Obj, p))
	case "abs":
		return r.hasher.sum(p)
	case "cfg":
		if v, ok := r.config[p]; ok {
			return v
		}
		return "n"
	}
	return "?"
}

// cmdEnv hashes what decides an object's compile command besides its
// dependencies: the configuration, the compiler and flags, and the
// Makefile of its directory.
func (r *runner) cmdEnv(obj string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00", parserVersion, r.cfg.Name, strings.Join(r.flags, " "))
	h.Write(r.confRaw)
	dir := filepath.Dir(obj)
	for _, mf := range []string{"Makefile", "Kbuild"} {
		b, _ := os.ReadFile(filepath.Join(r.d.Src, dir, mf))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// step brings the tree to the state after patch k and compiles what the
// patch affects.
func (r *runner) step(ctx context.Context, k int, overlay map[string][]byte, changed []string, synced bool) (*Cell, *Cell, error) {
	cell := &Cell{Status: Pass}
	// Configure again when a Kconfig file changed (or the tree came from
	// another state than the previous step).
	kconf := !synced
	for _, c := range changed {
		if strings.HasPrefix(filepath.Base(c), "Kconfig") {
			kconf = true
		}
	}
	oldCfg := r.config // after patch k-1
	if kconf && !synced && r.lazy() {
		// The object tree's .config is another step's (the series'
		// end): start from the base's, as the full method's first step.
		if err := os.WriteFile(filepath.Join(r.d.Obj, ".config"), r.state.BaseConfRaw, 0o644); err != nil {
			return nil, nil, err
		}
	}
	if kconf {
		// The configuration after patch k: the previous one brought up to
		// date with the Kconfig files now (olddefconfig: new symbols get
		// their defaults and selects), as a developer's build tree would.
		if err := r.d.MakeWith(ctx, kbuild.MakeOptions{Arch: r.cfg.Arch, Jobs: 1, Args: r.flags, Env: r.env(), NoStepCount: true, CPU: r.otherCPU}, "olddefconfig"); err != nil {
			return nil, nil, err
		}
		if err := r.loadConfig(); err != nil {
			return nil, nil, err
		}
	}
	if k == r.st.n && r.definesFinal(overlay) {
		for _, p := range kbuild.Check(r.config, r.cfg.Final, r.d.Src) {
			cell.Errors = append(cell.Errors, Problem{Diag: Diag{File: ".config", Severity: "error", Message: p.String()}})
		}
	}
	var symsChanged []string
	for _, s := range unionKeys(oldCfg, r.config) {
		if val(oldCfg, s) != val(r.config, s) {
			symsChanged = append(symsChanged, s)
		}
	}
	if kconf {
		// Bring include/config/ and auto.conf up to date for the query
		// of enabled objects below.
		if err := r.d.MakeWith(ctx, kbuild.MakeOptions{Arch: r.cfg.Arch, Jobs: 1, Args: r.flags, Env: r.env(), NoStepCount: true, CPU: r.otherCPU}, "syncconfig"); err != nil {
			return nil, nil, err
		}
	}
	objs, err := r.affected(ctx, k, symsChanged)
	if err != nil {
		return nil, nil, err
	}
	cell.Objects = objs
	results := map[string]*objResult{}
	var miss []string
	for _, obj := range objs {
		if res, ok := r.state.lookup(obj, r.cmdEnv(obj), r.val); ok {
			results[obj] = res
		} else {
			miss = append(miss, obj)
		}
	}
	if len(miss) > 0 {
		r.logf("patch %d/%d (%s): %d objects affected, compiling %d: %s", k, r.st.n, r.st.patch(k).ID, len(objs), len(miss), strings.Join(first(miss, 6), " "))
		for _, obj := range miss {
			os.Remove(filepath.Join(r.d.Obj, obj))
		}
		p := newOutputParser(r.d.Rel)
		err := r.make(ctx, p, true, miss...)
		var be *kbuild.BuildError
		if err != nil && !errors.As(err, &be) {
			return nil, nil, err
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		for _, obj := range miss {
			res := p.results[obj]
			if res == nil {
				res = &objResult{}
			}
			if _, err := os.Stat(filepath.Join(r.d.Obj, obj)); err != nil && !res.Failed {
				// make did not build it and said nothing we understood.
				res.Failed = true
				msg := "make did not build it"
				if be != nil && len(be.Tail) > 0 {
					msg += ": " + be.Tail[len(be.Tail)-1]
				}
				res.Errors = append(res.Errors, Diag{File: strings.TrimSuffix(obj, ".o") + ".c", Severity: "error", Message: msg})
			}
			results[obj] = res
			if c := kbuild.ReadCmdFile(r.d.Obj, obj); c != nil {
				r.cmds[obj] = c
				delete(r.names, obj)
				if !res.Failed {
					r.state.remember(obj, r.cmdEnv(obj), depNames(c, r.d.Src, r.d.Obj), r.val, *res)
				}
			}
		}
		cell.Compiled = len(miss)
	}
	checked := objs
	if r.cfg.Link && !anyFailed(results) {
		res, err := r.link(ctx, k)
		if err != nil {
			return nil, nil, err
		}
		results[LinkObject] = res
		cell.Linked = true
		checked = append(append([]string(nil), objs...), LinkObject)
	}
	if r.lazy() {
		// Ask the base about every object with warnings at once: one
		// make for all of them.
		var ask []string
		for _, obj := range checked {
			if obj != LinkObject && len(results[obj].Warnings) > 0 {
				ask = append(ask, obj)
			}
		}
		if _, err := r.baseObjects(ask); err != nil {
			return nil, nil, err
		}
		if res := results[LinkObject]; res != nil && len(res.Warnings) > 0 {
			if err := r.askBaseLink(res.Warnings); err != nil {
				return nil, nil, err
			}
		}
	}
	// The cell: errors, and warnings the base did not have.
	seen := map[string]bool{}
	for _, obj := range checked {
		res := results[obj]
		for _, d := range res.Errors {
			if !seen[d.Key()] {
				seen[d.Key()] = true
				cell.Errors = append(cell.Errors, r.problem(d, obj, k))
			}
		}
		for _, d := range res.Warnings {
			if seen[d.Key()] {
				continue
			}
			old, err := r.isBaseWarning(obj, d)
			if err != nil {
				return nil, nil, err
			}
			if old {
				continue
			}
			seen[d.Key()] = true
			pr := r.problem(d, obj, k)
			if obj == LinkObject && strings.HasPrefix(d.Message, "objtool: ") {
				pr.Trace = r.traceObjtool(ctx, d.Message)
				if o, f := r.st.blameChain(pr.Trace, k); f != nil {
					pr.Origin = o
				}
			}
			pr.MovedFrom = r.st.movedFrom(d, k, pr.Origin.Patch, r.baseHasKey)
			cell.Warnings = append(cell.Warnings, pr)
		}
	}
	switch {
	case len(cell.Errors) > 0:
		cell.Status = Fail
	case len(cell.Warnings) > 0:
		cell.Status = Warn
	}
	var w2 *Cell
	if r.w2Res != nil {
		w2 = &Cell{Status: Pass, Objects: r.w2Objects(k, objs)}
		w2.Warnings, w2.Skipped = r.w2(ctx, k, objs, results)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		switch {
		case w2.Skipped != "":
			w2.Status = Skip
		case len(w2.Warnings) > 0:
			w2.Status = Warn
		}
	}
	return cell, w2, nil
}

// LinkObject is the object whose warnings a linking configuration's
// steps check besides the compiled ones: vmlinux.o, which objtool
// validates as a whole (noinstr code with DEBUG_ENTRY).
const LinkObject = "vmlinux.o"

// link links vmlinux with the tree after patch k, relinking vmlinux.o
// whatever make thinks of it, and returns what the link said of
// vmlinux.o.
func (r *runner) link(ctx context.Context, k int) (*objResult, error) {
	r.logf("patch %d/%d (%s): linking vmlinux", k, r.st.n, r.st.patch(k).ID)
	os.Remove(filepath.Join(r.d.Obj, LinkObject))
	p := newOutputParser(r.d.Rel)
	err := r.make(ctx, p, true, "vmlinux")
	var be *kbuild.BuildError
	if err != nil && !errors.As(err, &be) {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res := p.results[LinkObject]
	if res == nil {
		res = &objResult{}
	}
	if be != nil && !res.Failed {
		res.Failed = true
		msg := "make vmlinux failed"
		if len(be.Errors) > 0 {
			msg += ": " + be.Errors[0].File + ": " + be.Errors[0].Message
		} else if len(be.Tail) > 0 {
			msg += ": " + be.Tail[len(be.Tail)-1]
		}
		res.Errors = append(res.Errors, Diag{File: LinkObject, Severity: "error", Message: msg})
	}
	return res, nil
}

func anyFailed(results map[string]*objResult) bool {
	for _, r := range results {
		if r.Failed {
			return true
		}
	}
	return false
}

func (r *runner) problem(d Diag, obj string, k int) Problem {
	p := Problem{Diag: d, Object: obj}
	if o, ok := r.st.origin(d.File, d.Line, k); ok {
		p.Origin = o
	}
	return p
}

// definesFinal reports whether the tree after the last patch defines the
// symbols Final speaks of (the unwind series does; an edited one may not).
func (r *runner) definesFinal(overlay map[string][]byte) bool {
	return bytes.Contains(overlay["arch/Kconfig"], []byte("config UNWIND_USER\n"))
}
