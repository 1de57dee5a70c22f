package buildtest

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"kpatch/plumbing/cache"
	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/outdir"
	"kpatch/series"
)

// Options configures Run.
type Options struct {
	// BuildRoot holds the build trees (BuildRoot/matrix-<config>);
	// "" means <cache>/build.
	BuildRoot string
	Configs   []string // names of the configurations; nil means all
	// Patches stops after that many patches (0: all), for tests that need
	// only the first ones.
	Patches int
	// From is the first patch built (0: 1): the earlier ones are applied
	// but not built, and patch From compiles what patches 1..From affect
	// together (one build instead of one per patch).
	From    int
	Jobs    int    // make jobs in all (0: 2); configurations build in parallel when Jobs allows
	CC      string // compiler command ("ccache gcc"); "" = make's default
	Sparse  string // "auto" (C=1 when sparse is installed, the default), "yes" or "no"
	Log     io.Writer
	Verbose int // 0: a line per step and every 200 make steps; 1: every 50; 2: make's output
	// BaseBuild is how the base's warnings are known: BaseOnDemand (""
	// too) or BaseFull.
	BaseBuild string
}

// Run builds every patch of the series s (a stacked series with its
// prerequisite, as series.Generate gives it) in every configuration and
// returns the table. An error means the test could not run (a broken
// build tree); build failures are in the report.
func Run(ctx context.Context, s *series.Series, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	start := time.Now()
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	o.Log = &lockedWriter{w: logw}
	if err := o.checkSeries(len(s.Patches)); err != nil {
		return nil, err
	}
	if o.BuildRoot == "" {
		c, err := cache.BuildRoot()
		if err != nil {
			return nil, err
		}
		o.BuildRoot = c
	}
	names := o.Configs
	if names == nil {
		names = DefaultConfigs
	}
	var cfgs []Config
	for _, n := range names {
		c, err := ConfigNamed(n)
		if err != nil {
			return nil, err
		}
		cfgs = append(cfgs, c)
	}
	if o.Jobs <= 0 {
		o.Jobs = 2
	}
	sparse := false
	switch o.Sparse {
	case "", "auto":
		_, err := exec.LookPath("sparse")
		sparse = err == nil
	case "yes": // Check has found it
		sparse = true
	}
	st := newSteps(s)
	rep := &Report{Series: s.Revision.Name(), Version: s.Revision.Version, Base: s.Tree.Base, Passed: true}
	rep.Flags = []string{"W=1"}
	for _, c := range cfgs {
		if sparse && c.Sparse {
			rep.Flags = append(rep.Flags, "C=1")
			break
		}
	}
	if o.CC != "" {
		rep.Flags = append(rep.Flags, "CC="+CompilerCommand(o.CC))
	}
	if o.Patches == 0 {
		o.Patches = len(s.Patches)
	}
	for _, p := range s.Patches[:o.Patches] {
		rep.Patches = append(rep.Patches, PatchInfo{p.Number, p.ID, p.Subject})
	}
	for i := range cfgs {
		c, err := WithFinal(cfgs[i], s.Revision, o.Patches)
		if err != nil {
			return nil, err
		}
		cfgs[i] = c
	}
	// One source tree for every configuration (BuildRoot/source), moved
	// from patch to patch once for all of them; each configuration has
	// its object tree (BuildRoot/matrix-<config>/obj). Another run
	// holding the source tree's lock is waited for, saying so.
	src := kbuild.NewDir(filepath.Join(o.BuildRoot, "source"))
	src.Log = o.Log // the unpacking's progress
	if err := os.MkdirAll(src.Root, 0o755); err != nil {
		return nil, err
	}
	unlock, err := outdir.Lock(ctx, filepath.Join(src.Root, ".lock"), o.Log, "the source tree "+src.Src)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Configurations in parallel, each with an equal share of the jobs;
	// their trees are locked before the source is unpacked, so that a
	// run waiting for another says so at once and unpacks nothing.
	par := min(len(cfgs), max(1, o.Jobs/2))
	jobs := max(1, o.Jobs/par)
	runners := make([]*runner, len(cfgs))
	for i, c := range cfgs {
		root := filepath.Join(o.BuildRoot, "matrix-"+c.Name)
		runners[i] = &runner{o: o, cfg: c, st: st, flags: o.flagsFor(c, sparse), jobs: jobs, log: o.Log, ctx: ctx, otherCPU: new(time.Duration),
			d: &kbuild.Dir{Root: root, Src: src.Src, Obj: filepath.Join(root, "obj")}}
		if err := runners[i].lock(ctx); err != nil {
			return nil, err
		}
		defer runners[i].close()
	}
	baseFile, commit, err := unpack(ctx, src, s)
	if err != nil {
		return nil, err
	}
	var w2 *runner // the first configuration built with gcc runs W=2
	for _, r := range runners {
		if r.cfg.Compiler == "" && r.cfg.Arch != "um" {
			w2 = r
			break
		}
	}
	if w2 != nil {
		w2.w2Res = &ConfigResult{Name: CheckW2, Arch: w2.cfg.Arch, Check: true, In: w2.cfg.Name, BuildDir: w2.d.Root,
			What: "W=2 warnings (-Wshadow, -Wtype-limits, ...) on the lines the series adds, compiled in " + w2.cfg.Name}
	}
	kdoc := &ConfigResult{Name: CheckKernelDoc, Check: true, What: "scripts/kernel-doc -Wall on the files the series creates, lines the series adds"}
	overlay, _, err := st.overlay(0, baseFile)
	if err != nil {
		return nil, err
	}
	if _, err := src.Sync(overlay, baseFile); err != nil {
		return nil, err
	}
	// The base's own source tree, for the on-demand questions to it.
	bsrc := &baseSource{ctx: ctx, o: o, overlay: overlay, file: baseFile,
		tree: func(ctx context.Context, d *kbuild.Dir) (kbuild.BaseFile, string, error) { return unpack(ctx, d, s) }}
	defer bsrc.close()
	for _, r := range runners {
		r.bsrc = bsrc
	}
	if err := parallel(ctx, par, runners, func(r *runner) error { return r.base(ctx, commit, overlay) }); err != nil {
		return nil, err
	}
	if err := buildFinal(ctx, src, st, runners, par, commit, overlay, baseFile); err != nil {
		return nil, err
	}
	for k := 1; k <= o.Patches; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var todo []*runner
		overlay, standIns, err := st.overlay(k, baseFile)
		if err != nil {
			return nil, err
		}
		if k < o.From {
			kdoc.Cells = append(kdoc.Cells, Cell{Status: NotBuilt})
		} else {
			probs, err := st.kernelDoc(ctx, src.Src, k)
			var notRun *NotRunError
			if err != nil && !errors.As(err, &notRun) {
				return nil, err
			}
			c := Cell{Status: Pass, Warnings: probs}
			switch {
			case notRun != nil:
				c.Status, c.Skipped = Skip, notRun.Why
			case len(probs) > 0:
				c.Status = Warn
			}
			kdoc.Cells = append(kdoc.Cells, c)
		}
		for _, r := range runners {
			if !r.cached(k, overlay, standIns) {
				todo = append(todo, r)
			}
		}
		if len(todo) == 0 {
			continue
		}
		changed, err := src.Sync(overlay, baseFile)
		if err != nil {
			return nil, err
		}
		if err := parallel(ctx, par, todo, func(r *runner) error { return r.runStep(ctx, k, overlay, standIns, changed) }); err != nil {
			return nil, err
		}
	}
	for _, r := range runners {
		if r.lazy() {
			r.res.BaseCPUSecs = r.baseCPU.Seconds() // the base's objects compiled on demand
			r.res.BaseWhole = r.state.Lazy.Full
			r.res.BaseAsked = len(r.state.Lazy.Objects)
		}
		r.res.CPUSecs = (r.baseCPU + r.finalCPU + *r.otherCPU).Seconds()
		rep.Configs = append(rep.Configs, *r.res)
	}
	if w2 != nil {
		rep.Configs = append(rep.Configs, *w2.w2Res)
	}
	rep.Configs = append(rep.Configs, *kdoc)
	for i := range rep.Configs {
		inherit(rep.Configs[i].Cells)
		markSince(rep.Configs[i].Cells)
	}
	for _, c := range rep.Configs {
		if c.Check {
			for _, cell := range c.Cells {
				rep.Warned = rep.Warned || cell.Status == Warn
			}
			continue
		}
		if c.BaseError != "" {
			rep.Passed = false
		}
		for _, cell := range c.Cells {
			switch cell.Status {
			case Fail, Skip:
				rep.Passed = false
			case Warn:
				rep.Warned = true
			}
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// buildFinal builds, in every configuration that asks the base on demand,
// the tree at the series' last patch built; configurations where it does
// not build have their base built in full instead.
func buildFinal(ctx context.Context, src *kbuild.Dir, st *steps, runners []*runner, par int, commit string, overlay map[string][]byte, baseFile kbuild.BaseFile) error {
	var lazy []*runner
	for _, r := range runners {
		if r.lazy() && r.res.BaseError == "" {
			lazy = append(lazy, r)
		}
	}
	if len(lazy) == 0 {
		return nil
	}
	final, _, err := st.overlay(lazy[0].o.Patches, baseFile)
	if err != nil {
		return err
	}
	if _, err := src.Sync(final, baseFile); err != nil {
		return err
	}
	if err := parallel(ctx, par, lazy, func(r *runner) error { return r.buildFinal(ctx, commit, overlay, final) }); err != nil {
		return err
	}
	var full []*runner
	for _, r := range lazy {
		if r.fullBase {
			full = append(full, r)
		}
	}
	if len(full) == 0 {
		return nil
	}
	if _, err := src.Sync(overlay, baseFile); err != nil {
		return err
	}
	return parallel(ctx, par, full, func(r *runner) error { return r.base(ctx, commit, overlay) })
}

// parallel runs f for every runner, at most n at a time, and returns
// their errors. Once ctx is done no further runner is started (a Ctrl-C
// during the first base build does not announce the others').
func parallel(ctx context.Context, n int, rs []*runner, f func(*runner) error) error {
	errs := make([]error, len(rs))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, r := range rs {
		sem <- struct{}{} // in order: the first configurations first
		if err := ctx.Err(); err != nil {
			<-sem
			errs[i] = err
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = f(r)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// flagsFor returns the make variables of every build of configuration c:
// W=1, C=1 when sparse runs and c is one of its configurations, c's own
// (LLVM=1, CROSS_COMPILE=), and CC= from --cc with c's compiler in place
// of gcc (--cc 'ccache gcc' builds the clang configuration with 'ccache
// clang').
func (o Options) flagsFor(c Config, sparse bool) []string {
	flags := []string{"W=1"}
	if sparse && c.Sparse {
		flags = append(flags, "C=1")
	}
	flags = append(flags, c.Make...)
	if cc := ccFor(o.CC, c); cc != "" {
		flags = append(flags, "CC="+cc)
	}
	return flags
}

// ccFor is make's CC for configuration c under --cc cc: "" when cc is.
func ccFor(cc string, c Config) string {
	if strings.TrimSpace(cc) == "" {
		return ""
	}
	f := strings.Fields(CompilerCommand(cc))
	i := 0
	for i < len(f)-1 && wrappers[baseName(f[i])] {
		i++
	}
	if c.Compiler != "" && baseName(f[i]) == "gcc" {
		f[i] = c.Compiler
	}
	return strings.Join(f, " ")
}

// unpack fills the source tree with the base and returns how to read the
// base's files.
func unpack(ctx context.Context, d *kbuild.Dir, s *series.Series) (kbuild.BaseFile, string, error) {
	t := s.Tree
	if !t.IsGit() {
		commit, err := d.UnpackPlain(ctx, t.Dir)
		if err != nil {
			return nil, "", err
		}
		return kbuild.PlainBaseFile(t.Dir), commit, nil
	}
	commit, err := d.UnpackBase(ctx, t.Dir, t.Base)
	if err != nil {
		return nil, "", err
	}
	return kbuild.GitBaseFile(ctx, t.Dir, commit), commit, nil
}

// lockedWriter serializes the progress lines of parallel configurations.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Unwrap returns the writer written to, for progress.IsTerminal.
func (l *lockedWriter) Unwrap() io.Writer { return l.w }

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
