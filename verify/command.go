package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"kpatch/series"
)

// Request is one run of kpatch verify as its flags give it: which series,
// against which tree, and which of the optional tools run besides
// verify's own rules.
type Request struct {
	// File is the posted series to check (an mbox, a directory of
	// .patch files or a saved thread); "" checks the series kpatch gen
	// would write from SpecDir, Version, Stack and On.
	File string
	// SpecDir, Version, Stack and On select the series description and
	// its revision as kpatch gen's flags do; with File, the series rules
	// of SpecDir apply only when it is given.
	SpecDir string
	Version int
	Stack   string
	On      int
	// Tree, Base and Plain name the kernel tree: the base the series is
	// applied to (with File, only when Tree is given).
	Tree, Base string
	Plain      bool
	// Ignore lists rule IDs (verify's, or checkpatch's types with
	// Checkpatch) to leave out.
	Ignore []string
	// Checkpatch and Coccicheck also run the tree's checkpatch.pl and
	// its semantic patches.
	Checkpatch, Coccicheck bool
	// CheckpatchArgs are more options for checkpatch.pl (see
	// Options.CheckpatchArgs).
	CheckpatchArgs []string
	// BuildDir is the kernel build directory (or a directory of them)
	// C files are preprocessed in; "" the trees kpatch test build keeps
	// in the cache, "none" verify's prelude only.
	BuildDir string
	// Progress receives one line as each long phase starts.
	Progress io.Writer
	// Stdin is what File "-" reads (nil: os.Stdin).
	Stdin io.Reader
}

// InputError is input verify could not read or use, or a request it
// cannot carry out: nothing was checked (kpatch exits 2).
type InputError struct{ Err error }

// Error returns the cause's message, one line.
func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

// Check runs verify as req asks and returns its report. An error is
// either ctx's (interrupted), an *InputError (nothing was checked) or a
// failure of the run itself; findings, errors among them, are the
// report's.
func Check(ctx context.Context, req Request) (*Report, error) {
	refuse := func(err error) error { return &InputError{err} }
	if req.Progress == nil {
		req.Progress = io.Discard
	}
	ids := req.Ignore
	if !req.Checkpatch { // checked before anything is read; with Checkpatch, once its types are known
		if err := CheckIgnore(ids, nil); err != nil {
			return nil, refuse(err)
		}
	}
	var trees []*BuildTree
	var busyTrees []string // passed by: a kpatch test build is building in them
	switch req.BuildDir {
	case "":
		trees, busyTrees = DefaultBuildTrees()
	case "none":
	default:
		var err error
		if trees, busyTrees, err = BuildTrees(req.BuildDir); err != nil {
			return nil, refuse(err)
		}
	}
	defer CloseBuildTrees(trees) // a test build waiting for them goes on
	var s *Series
	var seriesRules *SeriesRules
	sel, err := series.Select(req.SpecDir, req.Version, req.Stack, req.On)
	if err != nil {
		return nil, refuse(err)
	}
	if req.File != "" {
		file := req.File
		if file == "-" {
			path, dir, err := readStdin(req.Stdin)
			if err != nil {
				return nil, refuse(err)
			}
			defer os.RemoveAll(dir)
			file = path
		}
		open := func(dir, base string) error { return sel.OpenTree(dir, base, req.Plain) }
		if _, err := openMailTree(open, file, req.Tree, req.Base, req.Plain, req.Progress); err != nil {
			return nil, refuse(err)
		}
		err := interruptible(ctx, func() (err error) {
			s, err = ReadMail(file, sel.Tree)
			return err
		})
		if s != nil && req.File == "-" {
			s.Source = "standard input"
		}
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		if err != nil {
			return nil, refuse(err)
		}
		if req.SpecDir != "" {
			if seriesRules, err = NewSeriesRules(sel.Spec.VerifyRules); err != nil {
				return nil, refuse(fmt.Errorf("--spec %s: %w", req.SpecDir, err))
			}
		}
	} else {
		if err := sel.OpenTree(req.Tree, req.Base, req.Plain); err != nil {
			return nil, refuse(err)
		}
		g, err := series.Generate(ctx, sel)
		if err != nil {
			return nil, refuse(err)
		}
		if s, err = FromGenerated(g); err != nil {
			return nil, refuse(err)
		}
		if seriesRules, err = NewSeriesRules(sel.Spec.VerifyRules); err != nil {
			return nil, refuse(fmt.Errorf("--spec %s: %w", req.SpecDir, err))
		}
	}
	var cpTypes map[string]bool
	if req.Checkpatch && s.Tree != nil {
		var err error
		if cpTypes, err = CheckpatchTypes(s.Tree); err != nil {
			return nil, refuse(err)
		}
	}
	if err := CheckIgnore(ids, cpTypes); err != nil {
		return nil, refuse(err)
	}
	if req.Checkpatch && s.Tree == nil {
		return nil, refuse(fmt.Errorf("--checkpatch runs the tree's scripts/checkpatch.pl: give the tree with --tree"))
	}
	if req.Coccicheck && s.Tree == nil {
		return nil, refuse(fmt.Errorf("--coccicheck runs the tree's scripts/coccinelle: give the tree with --tree"))
	}
	opt := Options{Ignore: ids, Series: seriesRules, Context: ctx, BuildTrees: trees, PreprocessCache: DefaultPreprocessCache(), CheckpatchArgs: req.CheckpatchArgs}
	var findings []Finding
	how := "with verify's prelude"
	if len(trees) > 0 {
		how = fmt.Sprintf("through %d build trees (the first run preprocesses every C file they build)", len(trees))
	}
	stop := slowPhase(req.Progress, fmt.Sprintf("kpatch verify: checking %d patches, the C files read %s", len(s.Patches), how))
	findings, err = RunContext(s, opt)
	stop()
	if err != nil {
		return nil, err
	}
	if req.Checkpatch {
		fmt.Fprintf(req.Progress, "kpatch verify: running scripts/checkpatch.pl of %s on %d patches\n", s.Tree.Base, len(s.Patches))
		if findings, err = Checkpatch(ctx, s, findings, opt); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, refuse(err)
		}
	}
	if req.Coccicheck {
		fmt.Fprintf(req.Progress, "kpatch verify: running the semantic patches of %s's scripts/coccinelle on %d patches\n", s.Tree.Base, len(s.Patches))
		if findings, err = Coccicheck(ctx, s, findings, opt); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, refuse(err)
		}
	}
	rep := NewReport(s, findings)
	for _, b := range busyTrees {
		rep.Notes = append(rep.Notes, "build tree "+b+" passed by: a kpatch test build is building in it")
	}
	return rep, nil
}

// interruptible runs f and returns its error, or ctx's as soon as ctx is
// done (Ctrl-C): f's work is abandoned, which is safe because verify writes
// nothing before its report.
func interruptible(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
