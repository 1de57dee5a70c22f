package buildtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/outdir"
)

// How the base's warnings are known (Options.BaseBuild).
const (
	// BaseOnDemand builds the series first (one full build at its last
	// patch, which gives every object's dependencies), then each patch's
	// affected objects as always, and compiles at the base only the
	// objects a warning of the series' builds is in question for, in a
	// second object tree of the base (link included only when the
	// series' link gives objtool warnings).
	BaseOnDemand = "ondemand"
	// BaseFull builds the whole base first and compares with all of it.
	BaseFull = "full"
)

// maxAskObjects is how many base objects one warning's question may
// compile (a warning in a header: the base objects that include it);
// beyond, the whole base is built, which answers every question.
const maxAskObjects = 40

// lazyVersion changes when the base's answers are found differently,
// so that answers remembered by an earlier kpatch are asked again.
const lazyVersion = 2 // 2: objects kbuild's directory lists miss

// lazyBase is what a configuration knows of the base built on demand,
// remembered in its build directory for the base it was asked of.
type lazyBase struct {
	Key     string              // the base's inputs (runner.baseKey)
	Objects map[string]lazyObj  // objects asked about
	Full    bool                // the whole base was built: All holds every warning
	All     map[string][]string // object -> warning keys, when Full
	// Link answers objtool's warnings on vmlinux.o without the base's
	// whole link (askBaseLink): warning key -> the base's link gives it.
	Link map[string]bool
}

// lazyObj is the base's answer for one object.
type lazyObj struct {
	Exists   bool     // the base's configuration builds it into the kernel
	Warnings []string // its warnings' keys
}

// baseSource is the source tree of the base for the on-demand
// compiles: one for every configuration, unpacked the first time one
// asks (BuildRoot/base-source), locked for the run.
type baseSource struct {
	once    sync.Once
	err     error
	dir     *kbuild.Dir
	unlock  func()
	ctx     context.Context
	o       Options
	tree    func(ctx context.Context, d *kbuild.Dir) (kbuild.BaseFile, string, error)
	overlay map[string][]byte
	file    kbuild.BaseFile
}

// get unpacks the base source tree the first time it is called.
func (b *baseSource) get() (*kbuild.Dir, error) {
	b.once.Do(func() {
		d := kbuild.NewDir(filepath.Join(b.o.BuildRoot, "base-source"))
		d.Log = b.o.Log
		if err := os.MkdirAll(d.Root, 0o755); err != nil {
			b.err = err
			return
		}
		unlock, err := outdir.Lock(b.ctx, filepath.Join(d.Root, ".lock"), b.o.Log, "the base source tree "+d.Src)
		if err != nil {
			b.err = err
			return
		}
		b.unlock = unlock
		file, _, err := b.tree(b.ctx, d)
		if err != nil {
			b.err = err
			return
		}
		b.file = file
		if _, err := d.Sync(b.overlay, file); err != nil {
			b.err = err
			return
		}
		b.dir = d
	})
	return b.dir, b.err
}

func (b *baseSource) close() {
	if b != nil && b.unlock != nil {
		b.unlock()
	}
}

// lazy reports whether this configuration asks the base on demand.
func (r *runner) lazy() bool { return r.o.BaseBuild != BaseFull && !r.fullBase }

// configureBase makes the base's configuration (the source tree is at
// the base), records it, and builds nothing: the on-demand method's
// base step.
func (r *runner) configureBase(ctx context.Context, commit string, overlay map[string][]byte) error {
	r.baseKey = r.baseInputs(commit, overlay)
	if key := fmt.Sprintf("%s/%d", r.baseKey, lazyVersion); r.state.Lazy.Key != key {
		r.state.Lazy = lazyBase{Key: key}
		r.state.BaseConfig = nil
	}
	if r.state.Lazy.Objects == nil {
		r.state.Lazy.Objects = map[string]lazyObj{}
	}
	if r.state.BaseConfig == nil || r.state.BaseConfRaw == nil {
		os.Remove(filepath.Join(r.d.Obj, "kpatch-config-key"))
		if _, err := r.configure(ctx); err != nil {
			return err
		}
		if err := r.loadConfig(); err != nil {
			return err
		}
		r.state.BaseConfig, r.state.BaseConfRaw = r.config, r.confRaw
	}
	r.config, r.confRaw = r.state.BaseConfig, r.state.BaseConfRaw
	return nil
}

// buildFinal builds the whole tree at the series' last patch built (the
// source tree is at it): the dependencies of every object, which say
// what each patch affects, and the results the last step reuses. The
// configuration is the base's brought up to date with the Kconfig files
// there, as a step's is. A tree that does not build there is built at
// the base in full instead (BaseFull), so that an error in a step is
// found as the full method finds it.
func (r *runner) buildFinal(ctx context.Context, commit string, overlay, final map[string][]byte) error {
	key := r.finalKey(final)
	if r.state.FinalKey == key {
		if err := r.scan(); err == nil && len(r.cmds) > 0 {
			r.logf("series built in an earlier run (%d objects)", len(r.cmds))
			r.config, r.confRaw = r.state.BaseConfig, r.state.BaseConfRaw
			return nil
		}
	}
	r.state.FinalKey = ""
	if err := r.restoreBaseConfig(ctx); err != nil {
		return err
	}
	r.logf("building the series at patch %d in %s (full build, %s); the base only where a warning asks", r.o.Patches, r.d.Obj, strings.Join(r.flags, " "))
	p := newOutputParser(r.d.Rel)
	t0 := time.Now()
	err := r.makeWith(ctx, p, false, &r.finalCPU, "-k", "vmlinux")
	var be *kbuild.BuildError
	if err != nil && !errors.As(err, &be) {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if be != nil {
		r.logf("the series does not build at patch %d: building the base in full to compare", r.o.Patches)
		r.fullBase = true
		r.state.Steps = map[string]stepRecord{}
		return nil
	}
	if err := r.scan(); err != nil {
		return err
	}
	// The objects compiled now: their results are those of the last
	// step wherever their inputs are the same then.
	for obj, c := range r.cmds {
		if !p.compiled[obj] {
			continue
		}
		res := p.results[obj]
		if res == nil {
			res = &objResult{}
		}
		r.state.remember(obj, r.cmdEnv(obj), depNames(c, r.d.Src, r.d.Obj), r.val, *res)
	}
	r.state.FinalKey = key
	r.logf("series built: %d objects (%s)", len(r.cmds), time.Since(t0).Round(time.Second))
	r.config, r.confRaw = r.state.BaseConfig, r.state.BaseConfRaw
	return r.state.save(r.d.Root)
}

// finalKey hashes the inputs of the full build at the series' end.
func (r *runner) finalKey(final map[string][]byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "final\x00%d\x00%s\x00%d\x00", cellVersion, r.baseKey, r.o.Patches)
	for _, p := range sortedKeys(final) {
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(final[p]))
		h.Write(final[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// restoreBaseConfig puts the base's configuration in the object tree and
// brings it up to date with the Kconfig files of the source tree now.
func (r *runner) restoreBaseConfig(ctx context.Context) error {
	if err := os.WriteFile(filepath.Join(r.d.Obj, ".config"), r.state.BaseConfRaw, 0o644); err != nil {
		return err
	}
	if err := r.d.MakeWith(ctx, kbuild.MakeOptions{Arch: r.cfg.Arch, Jobs: 1, Args: r.flags, Env: r.env(), NoStepCount: true, CPU: r.otherCPU}, "olddefconfig"); err != nil {
		return err
	}
	return r.loadConfig()
}

// baseRunner is the runner of the base's own object tree
// (<build dir>/base/obj) on the base source tree.
func (r *runner) baseRunner() (*runner, error) {
	if r.baseR != nil {
		return r.baseR, nil
	}
	src, err := r.bsrc.get()
	if err != nil {
		return nil, err
	}
	b := *r
	b.d = &kbuild.Dir{Root: filepath.Join(r.d.Root, "base"), Src: src.Src, Obj: filepath.Join(r.d.Root, "base", "obj")}
	if err := os.MkdirAll(b.d.Obj, 0o755); err != nil {
		return nil, err
	}
	if _, err := b.configure(r.ctx); err != nil {
		return nil, err
	}
	// include/config/ and auto.conf, which say what the configuration
	// builds (enabledObjects).
	if err := b.d.MakeWith(r.ctx, kbuild.MakeOptions{Arch: b.cfg.Arch, Jobs: 1, Args: b.flags, Env: b.env(), NoStepCount: true, CPU: &r.baseCPU}, "syncconfig"); err != nil {
		return nil, err
	}
	r.baseR = &b
	return r.baseR, nil
}

// baseObjects answers, for each of objs, whether the base builds it and
// its warnings there, compiling at the base those not asked before.
func (r *runner) baseObjects(objs []string) (map[string]lazyObj, error) {
	out := map[string]lazyObj{}
	lb := &r.state.Lazy
	var ask []string
	for _, o := range objs {
		if lb.Full {
			ws, ok := lb.All[o]
			out[o] = lazyObj{Exists: ok || r.baseHasSource(o), Warnings: ws}
			continue
		}
		if e, ok := lb.Objects[o]; ok {
			out[o] = e
			continue
		}
		ask = appendUnique(ask, o)
	}
	if len(ask) == 0 {
		return out, nil
	}
	b, err := r.baseRunner()
	if err != nil {
		return nil, err
	}
	// Only objects the base's configuration builds into the kernel are
	// at the base, as in a full build of it. kbuild's list of a
	// directory, read alone, misses objects whose names use variables
	// the top-level make exports (irq_$(BITS).o): an object the list of
	// the series' tree misses too, though the series' build compiled it,
	// is compiled at the base and is there when make produces it.
	enabled, listedNow := map[string]bool{}, map[string]bool{}
	dirs, unlisted := map[string]bool{}, map[string]bool{}
	var build []string
	for _, o := range ask {
		if !r.baseHasSource(o) {
			lb.Objects[o] = lazyObj{}
			continue
		}
		d := filepath.Dir(o)
		if !dirs[d] {
			dirs[d] = true
			objs, err := b.enabledObjects(r.ctx, d)
			if err != nil {
				// A directory kbuild cannot list alone (objects a
				// parent's Makefile names): compile them, and a failure
				// says one is not at the base.
				unlisted[d] = true
			}
			for _, e := range objs {
				enabled[e] = true // kbuild's lists name objects from the top
			}
			now, err := r.enabledObjects(r.ctx, d)
			if err != nil {
				unlisted[d] = true
			}
			for _, e := range now {
				listedNow[e] = true
			}
		}
		if !enabled[o] && !unlisted[d] && listedNow[o] {
			lb.Objects[o] = lazyObj{}
			continue
		}
		build = append(build, o)
	}
	if len(build) > 0 {
		r.logf("compiling %d objects at the base for the warnings in question: %s", len(build), strings.Join(first(build, 6), " "))
		for _, o := range build {
			os.Remove(filepath.Join(b.d.Obj, o))
		}
		p := newOutputParser(b.d.Rel)
		err := b.makeWith(r.ctx, p, true, &r.baseCPU, build...)
		var be *kbuild.BuildError
		if err != nil && !errors.As(err, &be) {
			return nil, err
		}
		if r.ctx.Err() != nil {
			return nil, r.ctx.Err()
		}
		for _, o := range build {
			e := lazyObj{Exists: true}
			if _, err := os.Stat(filepath.Join(b.d.Obj, o)); err != nil {
				lb.Objects[o] = lazyObj{} // the base does not build it
				continue
			}
			if res := p.results[o]; res != nil {
				for _, w := range res.Warnings {
					e.Warnings = append(e.Warnings, w.Key())
				}
			}
			lb.Objects[o] = e
		}
	}
	for _, o := range ask {
		out[o] = lb.Objects[o]
	}
	return out, r.state.save(r.d.Root)
}

// baseHasSource reports whether the source of obj is in the base.
func (r *runner) baseHasSource(obj string) bool {
	stem := strings.TrimSuffix(obj, ".o")
	for _, ext := range []string{".c", ".S"} {
		if _, ok, _ := r.bsrc.file(stem + ext); ok {
			return true
		}
	}
	return false
}

// buildBaseFull builds the whole base in the base's object tree, when a
// question spans more objects than is worth compiling one by one, or
// objtool's warnings on the link are in question.
func (r *runner) buildBaseFull() error {
	lb := &r.state.Lazy
	if lb.Full {
		return nil
	}
	b, err := r.baseRunner()
	if err != nil {
		return err
	}
	r.logf("building the base in full in %s (a warning's question spans too much of it)", b.d.Obj)
	p := newOutputParser(b.d.Rel)
	err = b.makeWith(r.ctx, p, false, &r.baseCPU, "vmlinux")
	var be *kbuild.BuildError
	if err != nil && !errors.As(err, &be) {
		return err
	}
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	if be != nil {
		return be // the base does not build: the full method says so too
	}
	lb.All = map[string][]string{}
	for obj, res := range p.results {
		for _, w := range res.Warnings {
			lb.All[obj] = append(lb.All[obj], w.Key())
		}
	}
	// Objects compiled in this tree before the full build printed nothing
	// now: keep what they gave then.
	for o, e := range lb.Objects {
		if _, ok := lb.All[o]; !ok && len(e.Warnings) > 0 {
			lb.All[o] = e.Warnings
		}
	}
	lb.Full = true
	return r.state.save(r.d.Root)
}

// baseAny reports whether any object of the base gives the warning key,
// which is in file: the full method's every-warning-of-the-base set. The
// objects asked are those whose dependencies (at the series' end) name
// the file, and the file's own object; when they are more than
// maxAskObjects, the whole base is built.
func (r *runner) baseAny(key, file string) (bool, error) {
	if r.state.Lazy.Full {
		return anyHas(r.state.Lazy.All, key), nil
	}
	if _, ok, _ := r.bsrc.file(file); !ok {
		return false, nil // not a file of the base: no base warning is in it
	}
	cand := r.includers(file)
	// The objects already asked first, then a few more: a header's
	// warning the base has is usually in every object that includes it.
	var known, rest []string
	for _, o := range cand {
		if _, ok := r.state.Lazy.Objects[o]; ok {
			known = append(known, o)
		} else {
			rest = append(rest, o)
		}
	}
	for _, batch := range [][]string{known, first(rest, askFirst), rest[min(len(rest), askFirst):]} {
		if len(batch) == 0 {
			continue
		}
		if len(batch) > maxAskObjects {
			// Proving that no base object warns takes the whole base.
			if err := r.buildBaseFull(); err != nil {
				return false, err
			}
			return anyHas(r.state.Lazy.All, key), nil
		}
		got, err := r.baseObjects(batch)
		if err != nil {
			return false, err
		}
		for _, e := range got {
			for _, w := range e.Warnings {
				if w == key {
					return true, nil
				}
			}
		}
	}
	return false, nil
}

// askFirst is how many objects that include a file are asked before
// all of them are.
const askFirst = 8

// includers are the objects that compile file: its own object and those
// whose recorded dependencies name it.
func (r *runner) includers(file string) []string {
	var out []string
	for _, ext := range []string{".c", ".S"} {
		if stem, ok := strings.CutSuffix(file, ext); ok {
			out = append(out, stem+".o")
		}
	}
	name := "src:" + file
	for _, obj := range sortedKeys(r.cmds) {
		for _, n := range r.depNamesOf(obj) {
			if n == name {
				out = appendUnique(out, obj)
				break
			}
		}
	}
	return out
}

func anyHas(all map[string][]string, key string) bool {
	for _, ws := range all {
		for _, w := range ws {
			if w == key {
				return true
			}
		}
	}
	return false
}

// isBaseWarning is the full method's test, asked of the base on demand:
// a warning of obj is the base's when obj had it at the base, or, for a
// warning in a header (or in an object the base had no warnings for),
// when any object of the base had it.
func (r *runner) isBaseWarning(obj string, d Diag) (bool, error) {
	if !r.lazy() {
		base := r.baseWarn
		if ws, ok := r.state.BaseWarnings[obj]; ok {
			base = map[string]bool{}
			for _, w := range ws {
				base[w] = true
			}
		}
		return base[d.Key()] || r.baseWarn[d.Key()] && !strings.HasSuffix(d.File, ".c"), nil
	}
	if obj == LinkObject {
		if at, ok := r.state.Lazy.Link[d.Key()]; ok && !r.state.Lazy.Full {
			return at, nil
		}
		if err := r.buildBaseFull(); err != nil {
			return false, err
		}
		ws, ok := r.state.Lazy.All[obj]
		if ok {
			for _, w := range ws {
				if w == d.Key() {
					return true, nil
				}
			}
			if strings.HasSuffix(d.File, ".c") {
				return false, nil
			}
		}
		return anyHas(r.state.Lazy.All, d.Key()), nil
	}
	got, err := r.baseObjects([]string{obj})
	if err != nil {
		return false, err
	}
	e := got[obj]
	if len(e.Warnings) > 0 {
		for _, w := range e.Warnings {
			if w == d.Key() {
				return true, nil
			}
		}
		if strings.HasSuffix(d.File, ".c") {
			return false, nil
		}
	}
	return r.baseAny(d.Key(), d.File)
}

// baseHasKey is movedFrom's question: did the base warn key (in file)
// anywhere.
func (r *runner) baseHasKey(file, key string) bool {
	if !r.lazy() {
		return r.baseWarn[key]
	}
	ok, err := r.baseAny(key, file)
	if err != nil {
		r.logf("asking the base about %s: %v", key, err)
	}
	return ok
}
