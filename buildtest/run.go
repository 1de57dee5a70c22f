package buildtest

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"kpatch/plumbing/kerneltree"
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
