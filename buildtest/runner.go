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
