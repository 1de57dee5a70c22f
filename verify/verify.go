package verify

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"kpatch/verify/cunit"
)

// Severity says whether a finding fails the check (Error) or is advice
// (Warning).
type Severity int

// The severities.
const (
	Warning Severity = iota
	Error
)

// String prints "error" or "warning".
func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// MarshalText writes the severity as String prints it.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Finding is one problem found in a series.
type Finding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Patch    int      `json:"patch"` // 0: the series as a whole
	Subject  string   `json:"subject,omitempty"`
	// File and Line locate the problem: a path in the tree at that patch
	// for code, or the mail (file and line) for the commit message.
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"` // what is wrong and what to do
	Why     string `json:"why"`     // why reviewers care
	Source  string `json:"source"`  // "verify" or "checkpatch"
}

// Where prints "file:line", "file" or "".
func (f Finding) Where() string {
	switch {
	case f.File == "":
		return ""
	case f.Line > 0:
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}

// Scope says whom a rule is for: every kernel series (Kernel), or the
// series whose spec declares it (Series: one review's points).
type Scope string

// The scopes.
const (
	Kernel      Scope = "kernel"
	SeriesScope Scope = "series"
)

// Rule is one check.
type Rule struct {
	ID       string
	Severity Severity
	Scope    Scope  // Kernel unless set
	Why      string // one line: why reviewers care
	check    func(c *checker)
}

// Rules returns every rule, in the order they run.
func Rules() []Rule {
	out := append([]Rule{}, messageRules...)
	out = append(out, lineRules...)
	out = append(out, cRules...)
	out = append(out, ccRules...)
	out = append(out, kconfigRules...)
	out = append(out, hookRules...)
	out = append(out, checkpatchRules...)
	out = append(out, analyzerRules...)
	for i := range out {
		if out[i].Scope == "" {
			out[i].Scope = Kernel
		}
	}
	return out
}

// RuleIDs returns the IDs of every rule.
func RuleIDs() map[string]bool {
	out := map[string]bool{}
	for _, r := range Rules() {
		out[r.ID] = true
	}
	return out
}

// Options selects what Run checks.
type Options struct {
	Ignore []string // rule IDs to drop, as checkpatch --ignore
	// Series is what the series' spec declares: the rules of scope series
	// that apply and its own misspellings. Nil: kernel rules only.
	Series *SeriesRules
	// Context stops RunContext early (Ctrl-C); nil: never.
	Context context.Context
	// CheckpatchTimeout bounds the run of checkpatch.pl (Checkpatch); 0:
	// CheckpatchTimeout(number of patches).
	CheckpatchTimeout time.Duration
	// SpatchTimeout bounds each run of spatch, one semantic patch on the
	// series' files (Coccicheck); 0: DefaultSpatchTimeout.
	SpatchTimeout time.Duration
	// BuildTrees are the kernel build trees the C files are read in (each
	// preprocessed as kbuild compiles it there); none: verify's prelude
	// stands in for the kernel headers.
	BuildTrees []*BuildTree
	// PreprocessCache keeps the preprocessed units between runs ("": no
	// cache).
	PreprocessCache string
	// CheckpatchArgs are more options for checkpatch.pl (Checkpatch), as
	// a subsystem asks for them: --strict, --codespell,
	// --max-line-length=N. CheckCheckpatchArgs says which it takes.
	CheckpatchArgs []string
}

// Run applies every rule to s and returns the findings, sorted by patch,
// file and line.
func Run(s *Series, opt Options) []Finding {
	fs, _ := RunContext(s, opt)
	return fs
}

// RunContext is Run that returns opt.Context's error as soon as it is
// done (Ctrl-C); the rules running then stop at their next patch, in the
// background, which is safe because verify writes nothing.
func RunContext(s *Series, opt Options) ([]Finding, error) {
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	var fs []Finding
	err := interruptible(ctx, func() (err error) {
		fs, err = runContext(ctx, s, opt)
		return err
	})
	return fs, err
}

// runContext is RunContext's work.
func runContext(ctx context.Context, s *Series, opt Options) ([]Finding, error) {
	ignore := map[string]bool{}
	for _, id := range opt.Ignore {
		ignore[strings.ToUpper(strings.TrimSpace(id))] = true
	}
	for _, r := range Rules() {
		if r.Scope == SeriesScope && !opt.Series.declares(r.ID) {
			ignore[r.ID] = true // not this series' rule
		}
	}
	s.index()
	units, err := s.newReader(ctx, opt) // the C files the rules read, parsed once per run
	if err != nil {
		return nil, err
	}
	defer units.Close()
	evals := &evalSet{m: map[string]Finding{}}
	// The rules are independent: run them on every core, each with its own
	// checker (the series is only read).
	rules := Rules()
	outs := make([][]Finding, len(rules))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, r := range rules {
		if r.check == nil || ignore[r.ID] && !reportsOthers[r.ID] {
			continue // ignored, or reported by another rule's check
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			c := &checker{s: s, rule: r, ignore: ignore, seen: map[string]bool{}, units: units, evals: evals, ctx: ctx, words: opt.Series.words()}
			func() {
				defer func() {
					if r := recover(); r != nil && r != errStopped { // errStopped: the context is done
						panic(r)
					}
				}()
				r.check(c)
			}()
			outs[i] = c.out
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var all []Finding
	for _, o := range outs {
		all = append(all, o...)
	}
	all = append(all, evals.findings()...)
	ri := &cReadInfo{trees: opt.BuildTrees, files: units.CReads()}
	s.cRead.Store(ri)
	return Sorted(all), nil
}

// reportsOthers are the rules whose check also reports other rules' IDs: they
// run while one of those is not ignored.
var reportsOthers = map[string]bool{"HEADER_GUARD": true, "UNUSED_STATIC": true, "MOVE_CHANGES_BODY": true}

// Sorted sorts findings by patch, file, line and ID, and drops exact
// duplicates.
func Sorted(fs []Finding) []Finding {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Patch != b.Patch {
			return a.Patch < b.Patch
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.ID < b.ID
	})
	var out []Finding
	for i, f := range fs {
		if i > 0 && f == fs[i-1] {
			continue
		}
		out = append(out, f)
	}
	return out
}

// checker collects the findings of the rule that runs.
type checker struct {
	s      *Series
	rule   Rule
	ignore map[string]bool
	out    []Finding
	seen   map[string]bool // what once has let through
	units  *cunit.Reader   // shared by the rules of one Run
	evals  *evalSet        // the C_EVAL findings, shared by the rules of one Run

	ctx      context.Context
	words    map[string]string      // the series' own misspellings
	noinstr  *noinstrIndex          // seriesFuncs' index, at the last patch asked
	usesAt   map[int]map[string]int // seriesUses by patch
	dirCodes map[string][]byte      // dirCode by directory

	nmiMention map[nmiVersion]bool // nmiFuncs: whether a file version mentions NMI
}

// errStopped unwinds a rule's check when the run's context is done.
var errStopped = errors.New("stopped")

// stopped ends the running rule's check (see RunContext) when the run is
// stopped; rules call it once per patch.
func (c *checker) stopped() {
	if c.ctx != nil && c.ctx.Err() != nil {
		panic(errStopped)
	}
}

// once reports whether key (within the running rule) is new: a problem that
// stays over several patches is reported at the first.
func (c *checker) once(key string) bool {
	key = c.rule.ID + " " + key
	if c.seen[key] {
		return false
	}
	c.seen[key] = true
	return true
}

// report adds a finding of the running rule.
func (c *checker) report(p *Patch, file string, line int, format string, args ...any) {
	if c.ignore[c.rule.ID] {
		return
	}
	f := Finding{ID: c.rule.ID, Severity: c.rule.Severity, File: file, Line: line,
		Message: fmt.Sprintf(format, args...), Why: c.rule.Why, Source: "verify"}
	if p != nil {
		f.Patch, f.Subject = p.Number, p.Subject
	}
	c.out = append(c.out, f)
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == Error {
			return true
		}
	}
	return false
}
