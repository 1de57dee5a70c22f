package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"kpatch/boottest"
	"kpatch/plumbing/kerneltree"
	"kpatch/plumbing/qemu"
	"kpatch/series"
)

// perfRun is what kpatch test qemu --kernel or --perf was given.
type perfRun struct {
	fs       *flagSet
	kernel   string
	sf       *seriesFlags
	buildDir string
	accel    qemu.Accel
	timeout  time.Duration
	verbose  int
	jobs     int
	json     bool
}

func shippedNames() string { return strings.Join(kerneltree.ShippedNames(), ", ") }

// cmdTestQEMUPerf runs the perf cases on a shipped kernel (--kernel) or on
// the generated series (--perf).
func cmdTestQEMUPerf(ctx context.Context, p perfRun, stdout, stderr io.Writer) error {
	if err := perfConflicts(p); err != nil {
		return err
	}
	o := boottest.PerfOptions{BuildDir: p.buildDir, Log: stderr, Verbose: p.verbose, Jobs: p.jobs, Accel: p.accel, BootTimeout: p.timeout}
	if p.verbose >= 2 {
		o.Console = stderr
	}
	var rep *boottest.Report
	var err error
	if p.kernel != "" {
		k, lerr := kerneltree.LookupShipped(p.kernel)
		if errors.Is(lerr, kerneltree.ErrUnknownShipped) {
			return badUsage("--kernel %q: give one of %s", p.kernel, shippedNames())
		}
		rep, err = boottest.RunShipped(ctx, k, o)
	} else {
		sel, serr := p.sf.selection(false)
		if serr != nil {
			return serr
		}
		if err := boottest.CheckTools(ctx, true); err != nil {
			return err
		}
		if err := p.sf.openTree(sel); err != nil {
			return err
		}
		s, gerr := series.Generate(ctx, sel)
		if gerr != nil {
			return fmt.Errorf("generating the series: %w", gerr)
		}
		rep, err = boottest.RunPerfSeries(ctx, s, o)
	}
	if err != nil {
		return err
	}
	if err := printReport(stdout, rep, p.json); err != nil {
		return err
	}
	if !rep.Passed {
		return ErrTestFailed
	}
	return nil
}

// perfConflicts refuses the flags that do not apply: a shipped kernel is
// no series (--tree, --base, --spec, -v, --stack, --on), and the perf cases
// have no extra cases and no debug kernel.
func perfConflicts(p perfRun) error {
	if p.fs == nil {
		return nil
	}
	var bad []string
	p.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "extra", "debug":
			bad = append(bad, "--"+f.Name)
		case "tree", "base", "spec", "v", "stack", "on", "plain":
			if p.kernel != "" {
				bad = append(bad, "--"+f.Name)
			}
		}
	})
	if len(bad) == 0 {
		return nil
	}
	what := "--perf"
	if p.kernel != "" {
		what = "--kernel " + p.kernel
	}
	return badUsage("%s does not take %s: a shipped kernel is no series, and the perf cases have no extra cases and no debug kernel", what, strings.Join(bad, ", "))
}
