package buildtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/outdir"
)

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
	cmds    map[string]*kbuild.CmdFile
	names   map[string][]string // object -> depNames of its cmds entry, once
	config  map[string]string   // the .config now
	confRaw []byte
	baseKey string

	res      *ConfigResult
	w2Res    *ConfigResult // the W=2 check's column, when this configuration runs it
	unlock   func()
	baseWarn map[string]bool // every warning of the base, for objects the base did not have
	baseCPU  time.Duration   // CPU time of the base build's make
	synced   bool            // the previous patch was built here: .config and objects are at it

	ctx      context.Context // the run's, for the questions to the base
	bsrc     *baseSource     // the base's source tree, for the questions to the base
	baseR    *runner         // the base's object tree, once a question needed it
	fullBase bool            // the series did not build at its end: the base is built in full
	finalCPU time.Duration   // CPU time of the full build at the series' end
	otherCPU *time.Duration  // CPU time of the steps' makes (shared with the base's runner)
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.log, "build: %s: "+format+"\n", append([]any{r.cfg.Name}, args...)...)
}

// lock takes the configuration's build tree, waiting for another run
// that holds it (a test build, verify reading it) unless stopped, and
// loads what the tree remembers.
func (r *runner) lock(ctx context.Context) error {
	r.res = &ConfigResult{Name: r.cfg.Name, Arch: r.cfg.Arch, What: r.cfg.What, BuildDir: r.d.Root, Flags: r.flags}
	if err := os.MkdirAll(r.d.Root, 0o755); err != nil {
		return err
	}
	unlock, err := outdir.Lock(ctx, filepath.Join(r.d.Root, ".lock"), r.log, "the build tree "+r.d.Root)
	if err != nil {
		return err
	}
	r.unlock = unlock
	// Build trees once had a source tree of their own.
	os.RemoveAll(filepath.Join(r.d.Root, "src"))
	r.state = loadState(r.d.Root)
	r.hasher = &fileHasher{memo: map[string]fileSum{}}
	return nil
}

// close saves what the tree remembers and releases it.
func (r *runner) close() {
	if r.state != nil {
		r.state.save(r.d.Root)
	}
	if r.unlock != nil {
		r.unlock()
	}
}

// base builds the base (the source tree is at it), or finds it built; a
// base that does not build is the configuration's result, every patch
// skipped.
func (r *runner) base(ctx context.Context, commit string, overlay map[string][]byte) error {
	r.res.Compiler, _, _ = strings.Cut(compilerID(ctx, r.compilerCommand()), "\n")
	t0 := time.Now()
	var built bool
	var err error
	if r.lazy() {
		err = r.configureBase(ctx, commit, overlay)
	} else {
		built, err = r.buildBase(ctx, commit, overlay)
	}
	r.res.BaseBuilt, r.res.BaseSecs = built, time.Since(t0).Seconds()
	r.res.BaseOnDemand = r.lazy()
	r.res.BaseCPUSecs = r.baseCPU.Seconds()
	if err != nil {
		var be *kbuild.BuildError
		var ce *kbuild.ConfigError
		if errors.As(err, &be) || errors.As(err, &ce) {
			r.res.BaseError = strings.SplitN(err.Error(), "\n", 3)[0]
			if be != nil && len(be.Errors) > 0 {
				r.res.BaseError = fmt.Sprintf("%s:%d: error: %s", be.Errors[0].File, be.Errors[0].Line, be.Errors[0].Message)
			}
			if ce != nil {
				r.res.BaseError = ce.Problems[0].String()
			}
			return nil
		}
		return err
	}
	r.baseWarn = map[string]bool{}
	for _, ws := range r.state.BaseWarnings {
		for _, w := range ws {
			r.baseWarn[w] = true
		}
	}
	return nil
}

// cached records patch k's cell when it needs no build: the base did
// not build (Skip), the patch is before From (applied, not built), or
// an earlier run built the same step. It reports whether it did.
func (r *runner) cached(k int, overlay map[string][]byte, standIns []string) bool {
	switch {
	case r.res.BaseError != "":
		r.addCell(Cell{Status: Skip})
		return true
	case k < r.o.From:
		r.addCell(Cell{Status: NotBuilt})
		return true
	}
	key := r.stepKey(k, overlay)
	rec, ok := r.state.Steps[key]
	if !ok || rec.Config == nil {
		return false
	}
	if r.w2Res != nil && rec.W2 == nil {
		return false
	}
	c := rec.Cell
	c.Cached = true
	c.StandIns = standIns
	r.config = rec.Config
	r.res.Cells = append(r.res.Cells, c)
	if r.w2Res != nil {
		w := *rec.W2
		w.Cached = true
		r.w2Res.Cells = append(r.w2Res.Cells, w)
	}
	r.logf("patch %d/%d (%s): %s (unchanged since an earlier run)", k, r.st.n, r.st.patch(k).ID, c.Status)
	r.synced = false
	return true
}

// addCell adds the same cell to the configuration's column and to its
// W=2 column.
func (r *runner) addCell(c Cell) {
	r.res.Cells = append(r.res.Cells, c)
	if r.w2Res != nil {
		r.w2Res.Cells = append(r.w2Res.Cells, c)
	}
}

// runStep builds patch k: the source tree is at it, changed are the
// files the move to it rewrote.
func (r *runner) runStep(ctx context.Context, k int, overlay map[string][]byte, standIns, changed []string) error {
	t := time.Now()
	cell, w2, err := r.step(ctx, k, overlay, changed, r.synced)
	if err != nil {
		return err
	}
	r.synced = true
	cell.Seconds = time.Since(t).Seconds()
	cell.StandIns = standIns
	if cell.Status == Fail {
		cell.Forced = forcedOnly(r.d.Src, r.config)
	}
	r.res.Cells = append(r.res.Cells, *cell)
	if r.w2Res != nil {
		r.w2Res.Cells = append(r.w2Res.Cells, *w2)
	}
	if cell.Status != Fail { // see forgetFailures
		r.state.Steps[r.stepKey(k, overlay)] = stepRecord{Cell: *cell, W2: w2, When: time.Now(), Config: r.config}
	}
	if err := r.state.save(r.d.Root); err != nil {
		return err
	}
	r.logf("patch %d/%d (%s): %s, %d objects, %d compiled (%s)", k, r.st.n, r.st.patch(k).ID, cell.Status,
		len(cell.Objects), cell.Compiled, time.Since(t).Round(time.Second))
	return nil
}
