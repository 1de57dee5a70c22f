package buildtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/kerneltree"
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
		c, err := kerneltree.CacheDir()
		if err != nil {
			return nil, err
		}
		o.BuildRoot = filepath.Join(c, "build")
	}
	cfgs := append([]Config(nil), Configs...)
	if o.Configs != nil {
		cfgs = nil
		for _, n := range o.Configs {
			c, err := ConfigNamed(n)
			if err != nil {
				return nil, err
			}
			cfgs = append(cfgs, c)
		}
	}
	if o.Jobs <= 0 {
		o.Jobs = 2
	}
	flags := []string{"W=1"}
	switch o.Sparse {
	case "", "auto":
		if _, err := exec.LookPath("sparse"); err == nil {
			flags = append(flags, "C=1")
		}
	case "yes": // Check has found it
		flags = append(flags, "C=1")
	}
	if o.CC != "" {
		flags = append(flags, "CC="+CompilerCommand(o.CC))
	}
	st := newSteps(s)
	rep := &Report{Series: s.Revision.Name(), Version: s.Revision.Version, Base: s.Tree.Base, Flags: flags, Passed: true}
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
	// Configurations in parallel, each with an equal share of the jobs.
	par := min(len(cfgs), max(1, o.Jobs/2))
	jobs := max(1, o.Jobs/par)
	rep.Configs = make([]ConfigResult, len(cfgs))
	errs := make([]error, len(cfgs))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, c := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := &runner{o: o, cfg: c, st: st, flags: flags, jobs: jobs, log: o.Log}
			res, err := r.run(ctx)
			if res != nil {
				rep.Configs[i] = *res
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, c := range rep.Configs {
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

// lockedWriter serializes the progress lines of parallel configurations.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runner builds one configuration.
type runner struct {
	o     Options
	cfg   Config
	st    *steps
	flags []string
	jobs  int
	log   io.Writer

	d       *kbuild.Dir
	state   *state
	hasher  *fileHasher
	cmds    map[string]*CmdFile
	config  map[string]string // the .config now
	confRaw []byte
	baseKey string
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.log, "build: %s: "+format+"\n", append([]any{r.cfg.Name}, args...)...)
}

func (r *runner) run(ctx context.Context) (*ConfigResult, error) {
	r.d = kbuild.NewDir(filepath.Join(r.o.BuildRoot, "matrix-"+r.cfg.Name))
	res := &ConfigResult{Name: r.cfg.Name, Arch: r.cfg.Arch, What: r.cfg.What, BuildDir: r.d.Root}
	// Another run building in the same tree (a test build, a boot test)
	// holds its lock, ROOT/.lock: wait for it, saying so, unless stopped.
	if err := os.MkdirAll(r.d.Root, 0o755); err != nil {
		return nil, err
	}
	unlock, err := outdir.Lock(ctx, filepath.Join(r.d.Root, ".lock"), r.log, "the build tree "+r.d.Root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	baseFile, commit, err := r.unpack(ctx)
	if err != nil {
		return nil, err
	}
	r.state = loadState(r.d.Root)
	r.hasher = &fileHasher{memo: map[string]fileSum{}}
	defer r.state.save(r.d.Root)

	t0 := time.Now()
	built, err := r.buildBase(ctx, commit, baseFile)
	res.BaseBuilt, res.BaseSecs = built, time.Since(t0).Seconds()
	if err != nil {
		var be *kbuild.BuildError
		var ce *kbuild.ConfigError
		if errors.As(err, &be) || errors.As(err, &ce) {
			res.BaseError = strings.SplitN(err.Error(), "\n", 3)[0]
			if be != nil && len(be.Errors) > 0 {
				res.BaseError = fmt.Sprintf("%s:%d: error: %s", be.Errors[0].File, be.Errors[0].Line, be.Errors[0].Message)
			}
			if ce != nil {
				res.BaseError = ce.Problems[0].String()
			}
			for range r.o.Patches {
				res.Cells = append(res.Cells, Cell{Status: Skip})
			}
			return res, nil
		}
		return nil, err
	}
	baseWarn := map[string]bool{} // every warning of the base, for objects the base did not have
	for _, ws := range r.state.BaseWarnings {
		for _, w := range ws {
			baseWarn[w] = true
		}
	}
	var synced bool // the tree on disk is at the previous step
	for k := 1; k <= r.o.Patches; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if k < r.o.From {
			res.Cells = append(res.Cells, Cell{Status: NotBuilt})
			continue
		}
		overlay, standIns, err := r.st.overlay(k, baseFile)
		if err != nil {
			return nil, err
		}
		key := r.stepKey(k, overlay)
		if rec, ok := r.state.Steps[key]; ok && rec.Config != nil {
			c := rec.Cell
			c.Cached = true
			c.StandIns = standIns
			r.config = rec.Config
			res.Cells = append(res.Cells, c)
			r.logf("patch %d/%d (%s): %s (unchanged since an earlier run)", k, r.st.n, r.st.patch(k).ID, c.Status)
			synced = false
			continue
		}
		t := time.Now()
		cell, err := r.step(ctx, k, overlay, baseFile, synced, baseWarn)
		if err != nil {
			return nil, err
		}
		synced = true
		cell.Seconds = time.Since(t).Seconds()
		cell.StandIns = standIns
		res.Cells = append(res.Cells, *cell)
		if cell.Status != Fail { // see forgetFailures
			r.state.Steps[key] = stepRecord{Cell: *cell, When: time.Now(), Config: r.config}
		}
		if err := r.state.save(r.d.Root); err != nil {
			return nil, err
		}
		r.logf("patch %d/%d (%s): %s, %d objects, %d compiled (%s)", k, r.st.n, r.st.patch(k).ID, cell.Status,
			len(cell.Objects), cell.Compiled, time.Since(t).Round(time.Second))
	}
	inherit(res.Cells)
	markSince(res.Cells)
	return res, nil
}

// inherit carries every problem of an object into the following patches
// that do not compile that object again: the tree after those patches
// still has it (they show FAIL or WARN "since" the patch that brought it).
func inherit(cells []Cell) {
	for k := 1; k < len(cells); k++ {
		if cells[k].Status == NotBuilt || cells[k-1].Status == NotBuilt {
			continue
		}
		compiled := map[string]bool{}
		for _, o := range cells[k].Objects {
			compiled[o] = true
		}
		have := map[string]bool{}
		for _, list := range [][]Problem{cells[k].Errors, cells[k].Warnings} {
			for _, p := range list {
				have[p.Key()] = true
			}
		}
		for _, p := range cells[k-1].Errors {
			if p.Object != "" && !compiled[p.Object] && !have[p.Key()] {
				cells[k].Errors = append(cells[k].Errors, p)
				have[p.Key()] = true
			}
		}
		for _, p := range cells[k-1].Warnings {
			if p.Object != "" && !compiled[p.Object] && !have[p.Key()] {
				cells[k].Warnings = append(cells[k].Warnings, p)
				have[p.Key()] = true
			}
		}
		switch {
		case cells[k].Status == Skip:
		case len(cells[k].Errors) > 0:
			cells[k].Status = Fail
		case len(cells[k].Warnings) > 0:
			cells[k].Status = Warn
		}
	}
}

// unpack fills the source tree with the base and returns how to read the
// base's files.
func (r *runner) unpack(ctx context.Context) (kbuild.BaseFile, string, error) {
	t := r.st.s.Tree
	if !t.IsGit() {
		commit, err := r.d.UnpackPlain(ctx, t.Dir)
		if err != nil {
			return nil, "", err
		}
		return kbuild.PlainBaseFile(t.Dir), commit, nil
	}
	commit, err := r.d.UnpackBase(ctx, t.Dir, t.Base)
	if err != nil {
		return nil, "", err
	}
	return kbuild.GitBaseFile(ctx, t.Dir, commit), commit, nil
}

// parserVersion changes when the diagnostics kept from a base build
// change meaning, so that an older base build is not reused.
const parserVersion = 2

// makeArgs are the make arguments of every build of this configuration.
func (r *runner) makeArgs() []string {
	return append([]string{"--output-sync=target"}, r.flags...)
}

// buildBase builds the whole base with the flags, once: a build directory
// whose base was built with the same inputs is reused. It reports
// whether it built.
func (r *runner) buildBase(ctx context.Context, commit string, baseFile kbuild.BaseFile) (bool, error) {
	overlay, _, err := r.st.overlay(0, baseFile)
	if err != nil {
		return false, err
	}
	if _, err := r.d.Sync(overlay, baseFile); err != nil {
		return false, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00", parserVersion, commit, r.cfg.Arch, r.cfg.Fragment, strings.Join(r.flags, " "), compilerID(ctx, r.o.CC))
	for _, p := range sortedKeys(overlay) {
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(overlay[p]))
		h.Write(overlay[p])
	}
	r.baseKey = hex.EncodeToString(h.Sum(nil))
	if r.state.BaseKey == r.baseKey && r.state.BaseConfig == nil {
		// Built by a kpatch that did not record the base's
		// configuration: make it again from the base's Kconfig files.
		os.Remove(filepath.Join(r.d.Obj, "kpatch-config-key"))
		if _, err := r.d.Configure(ctx, r.cfg.Arch, r.cfg.Fragment, r.cfg.Base); err == nil && r.loadConfig() == nil {
			r.state.BaseConfig = r.config
		}
	}
	if r.state.BaseKey == r.baseKey && r.state.BaseConfig != nil {
		// The .config on disk may be a later step's.
		err := r.loadConfig()
		r.config = r.state.BaseConfig
		if err == nil {
			if err := r.scan(); err != nil {
				return false, err
			}
			r.logf("base %s built in an earlier run (%d objects)", short(commit), len(r.cmds))
			return false, nil
		}
	}
	r.logf("building the base %s in %s (full build, %s)", short(commit), r.d.Obj, strings.Join(r.flags, " "))
	// A full build from an empty object tree, so that every object's base
	// warnings are seen.
	if err := os.RemoveAll(r.d.Obj); err != nil {
		return false, err
	}
	r.state.BaseKey = ""
	if _, err := r.d.Configure(ctx, r.cfg.Arch, r.cfg.Fragment, r.cfg.Base); err != nil {
		return false, err
	}
	if err := r.loadConfig(); err != nil {
		return false, err
	}
	p := newOutputParser(r.d.Rel)
	if err := r.make(ctx, p, false, "vmlinux"); err != nil {
		return false, err
	}
	r.state.BaseWarnings = map[string][]string{}
	for obj, res := range p.results {
		for _, w := range res.Warnings {
			r.state.BaseWarnings[obj] = append(r.state.BaseWarnings[obj], w.Key())
		}
	}
	if err := r.scan(); err != nil {
		return false, err
	}
	r.state.BaseKey = r.baseKey
	r.state.BaseConfig = r.config
	r.state.Steps = map[string]stepRecord{} // step results were relative to another base
	nw := 0
	for _, ws := range r.state.BaseWarnings {
		nw += len(ws)
	}
	r.logf("base built: %d objects, %d warnings (the reference for new ones)", len(r.cmds), nw)
	return true, r.state.save(r.d.Root)
}

// scan reads the dependencies of the ordinary objects of the object tree.
func (r *runner) scan() error {
	cmds, err := ScanObjects(r.d.Obj)
	if err != nil {
		return err
	}
	archived, err := ArchivedObjects(r.d.Obj)
	if err != nil {
		return err
	}
	r.cmds = map[string]*CmdFile{}
	for o, c := range cmds {
		if archived[o] {
			r.cmds[o] = c
		}
	}
	return nil
}

func (r *runner) loadConfig() error {
	b, err := os.ReadFile(filepath.Join(r.d.Obj, ".config"))
	if err != nil {
		return err
	}
	r.confRaw = b
	r.config, err = kbuild.ParseConfig(bytes.NewReader(b))
	return err
}

// make runs make in the object tree, feeding p with the output.
func (r *runner) make(ctx context.Context, p *outputParser, few bool, targets ...string) error {
	var progress kbuild.Progress
	var mu sync.Mutex
	var lw io.Writer = lineFunc(func(l string) {
		mu.Lock()
		p.line(l)
		mu.Unlock()
	})
	prefix := "kbuild: " + r.cfg.Name + ": "
	switch {
	case r.o.Verbose >= 2:
		lw = io.MultiWriter(lw, prefixWriter(r.log, prefix))
	case r.o.Verbose == 1:
		progress = kbuild.LineProgress(prefixWriter(r.log, prefix), 50)
	default:
		progress = kbuild.LineProgress(prefixWriter(r.log, prefix), 200)
	}
	if few && len(targets) < 50 && r.o.Verbose < 2 {
		progress = nil // a few objects: the step's own line is enough
	}
	return r.d.MakeWith(ctx, kbuild.MakeOptions{Arch: r.cfg.Arch, Jobs: r.jobs, Args: append(r.makeArgs(), extraArgs(few)...),
		Env: r.env(), Progress: progress, Log: lw, NoStepCount: few}, targets...)
}

// env is the environment of make: with ccache, paths under the build
// root are hashed relative to it (CCACHE_BASEDIR), so that a fresh build
// directory hits what another one compiled, unless the user chose a base.
func (r *runner) env() []string {
	if f := strings.Fields(r.o.CC); len(f) > 0 && baseName(f[0]) == "ccache" && os.Getenv("CCACHE_BASEDIR") == "" {
		return []string{"CCACHE_BASEDIR=" + r.o.BuildRoot}
	}
	return nil
}

func extraArgs(few bool) []string {
	if few {
		return []string{"-k"} // every object's result, not only the first failure's
	}
	return nil
}

// cellVersion changes when what a step's cell holds changes (a field or
// how it is derived from the objects' results), so that remembered steps
// are derived again; the objects' results stay cached.
const cellVersion = 2 // 2: Problem.MovedFrom

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
func (r *runner) step(ctx context.Context, k int, overlay map[string][]byte, baseFile kbuild.BaseFile, synced bool, baseWarn map[string]bool) (*Cell, error) {
	changed, err := r.d.Sync(overlay, baseFile)
	if err != nil {
		return nil, err
	}
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
	if kconf {
		// The configuration after patch k: the previous one brought up to
		// date with the Kconfig files now (olddefconfig: new symbols get
		// their defaults and selects), as a developer's build tree would.
		if err := r.d.MakeWith(ctx, kbuild.MakeOptions{Arch: r.cfg.Arch, Jobs: 1, Args: r.flags, NoStepCount: true}, "olddefconfig"); err != nil {
			return nil, err
		}
		if err := r.loadConfig(); err != nil {
			return nil, err
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
		if err := r.d.MakeWith(ctx, kbuild.MakeOptions{Arch: r.cfg.Arch, Jobs: 1, Args: r.flags, NoStepCount: true}, "syncconfig"); err != nil {
			return nil, err
		}
	}
	objs, err := r.affected(ctx, k, symsChanged)
	if err != nil {
		return nil, err
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
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
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
			if c := ReadCmd(r.d.Obj, obj); c != nil {
				r.cmds[obj] = c
				if !res.Failed {
					r.state.remember(obj, r.cmdEnv(obj), depNames(c, r.d.Src, r.d.Obj), r.val, *res)
				}
			}
		}
		cell.Compiled = len(miss)
	}
	// The cell: errors, and warnings the base did not have.
	seen := map[string]bool{}
	for _, obj := range objs {
		res := results[obj]
		base := map[string]bool{}
		if ws, ok := r.state.BaseWarnings[obj]; ok {
			for _, w := range ws {
				base[w] = true
			}
		} else if _, ok := r.state.BaseWarnings[obj]; !ok {
			base = baseWarn
		}
		for _, d := range res.Errors {
			if !seen[d.Key()] {
				seen[d.Key()] = true
				cell.Errors = append(cell.Errors, r.problem(d, obj, k))
			}
		}
		for _, d := range res.Warnings {
			if base[d.Key()] || baseWarn[d.Key()] && !strings.HasSuffix(d.File, ".c") || seen[d.Key()] {
				continue
			}
			seen[d.Key()] = true
			pr := r.problem(d, obj, k)
			pr.MovedFrom = r.st.movedFrom(d, k, pr.Origin.Patch, baseWarn)
			cell.Warnings = append(cell.Warnings, pr)
		}
	}
	switch {
	case len(cell.Errors) > 0:
		cell.Status = Fail
	case len(cell.Warnings) > 0:
		cell.Status = Warn
	}
	return cell, nil
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
		if c.names == nil {
			c.names = depNames(c, r.d.Src, r.d.Obj)
		}
		for _, s := range c.Config {
			if !symSet[s] {
				continue
			}
			for _, n := range c.names {
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
		for _, n := range c.names {
			if touched[n] {
				set[obj] = true
				break
			}
		}
	}
	// Objects of the files the series creates, when this configuration
	// builds them (kbuild says, from the directory's Makefile and the
	// configuration at this step).
	created := map[string]bool{}
	for _, p := range r.st.s.Revision.Spec().CreatedFiles() {
		if strings.HasSuffix(p, ".c") {
			if _, ok := r.st.at(p, k); ok {
				created[strings.TrimSuffix(p, ".c")+".o"] = true
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

// markSince sets each problem's Since: the first patch of the run of
// consecutive cells that have it.
func markSince(cells []Cell) {
	for i := range cells {
		for _, list := range [][]Problem{cells[i].Errors, cells[i].Warnings} {
			for j := range list {
				since := i + 1
				if i > 0 {
					for _, prev := range [][]Problem{cells[i-1].Errors, cells[i-1].Warnings} {
						for _, p := range prev {
							if p.Key() == list[j].Key() {
								since = p.Since
							}
						}
					}
				}
				list[j].Since = since
			}
		}
	}
}

func val(m map[string]string, s string) string {
	if v, ok := m[s]; ok {
		return v
	}
	return "n"
}

func unionKeys(a, b map[string]string) []string {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return sortedKeys(m)
}

func appendUnique(v []string, s string) []string {
	for _, x := range v {
		if x == s {
			return v
		}
	}
	return append(v, s)
}

func first(v []string, n int) []string {
	if len(v) <= n {
		return v
	}
	return append(append([]string{}, v[:n]...), "... ("+strconv.Itoa(len(v)-n)+" more)")
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// compilerID identifies the compiler a build uses.
func compilerID(ctx context.Context, cc string) string {
	out, err := exec.CommandContext(ctx, compiler(cc), "--version").Output()
	if err != nil {
		return cc
	}
	return string(out)
}

// lineFunc is a writer calling f for every line.
type lineFunc func(string)

func (f lineFunc) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		f(l)
	}
	return len(p), nil
}

func prefixWriter(w io.Writer, prefix string) io.Writer {
	return lineFunc(func(l string) { fmt.Fprintln(w, prefix+strings.TrimPrefix(l, "kbuild: ")) })
}
