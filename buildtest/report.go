package buildtest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Status of one patch in one configuration.
const (
	Pass = "PASS" // the objects it affects compiled without new warnings
	Warn = "WARN" // they compiled, with warnings the base did not have
	Fail = "FAIL" // one of them did not compile, or the configuration is wrong
	Skip = "SKIP" // not built: the base did not build; or a check that did not run (Cell.Skipped)
	// NotBuilt marks the patches before Options.From: applied, not built.
	NotBuilt = "-"
)

// Problem is an error or a new warning, with where its line came from.
type Problem struct {
	Diag
	Object string `json:"object,omitempty"` // the object being compiled
	Origin Origin `json:"origin"`           // who wrote the line
	// Since is the first patch of the run of consecutive patches that
	// have this problem in this configuration (equal to the cell's patch
	// when the patch introduced it).
	Since int `json:"since"`
	// MovedFrom is set when the warning is not new code's: the patch
	// that wrote the line removed the same line from this file, which
	// had the same warning at the base (code moved between files; the
	// warning is new to the object, as the kernel test robot would see
	// it, but not to the kernel).
	MovedFrom string `json:"moved_from,omitempty"`
	// Trace is, for an objtool warning on vmlinux.o, the source lines
	// inlined at the place it names, innermost first, each with the patch
	// that wrote it; Origin is then the outermost frame a patch wrote.
	Trace []Frame `json:"trace,omitempty"`
}

// Cell is the result of one patch in one configuration.
type Cell struct {
	Status   string    `json:"status"`
	Objects  []string  `json:"objects"`            // the objects the patch affects
	Compiled int       `json:"compiled"`           // of which compiled now (the others reused)
	Cached   bool      `json:"cached"`             // the whole step was reused from an earlier run
	Errors   []Problem `json:"errors,omitempty"`   // compiler errors (or a configuration problem)
	Warnings []Problem `json:"warnings,omitempty"` // warnings new relative to the base
	Seconds  float64   `json:"seconds"`
	// Skipped says why a check column's cell (W=2, kernel-doc) is SKIP:
	// the tool did not run, so the cell says nothing of the patch.
	Skipped string `json:"skipped,omitempty"`
	// StandIns says what the revision needs of its base that the base
	// lacks at this patch, and what the build defined in its place
	// (package standin).
	StandIns []string `json:"stand_ins,omitempty"`
	// Forced says, of a failed cell, which symbols are on only because
	// kpatch's test-only hook selects them at this patch (HookSymbol):
	// the failure is then in code no configuration of the tree compiles
	// yet.
	Forced string `json:"forced,omitempty"`
	// Linked says the step linked vmlinux (a linking configuration whose
	// objects compiled): vmlinux.o's warnings are then this patch's own.
	Linked bool `json:"linked,omitempty"`
}

// ConfigResult is the column of one configuration.
type ConfigResult struct {
	Name      string `json:"name"`
	Arch      string `json:"arch"`
	What      string `json:"what"`
	BuildDir  string `json:"build_dir"`
	BaseBuilt bool   `json:"base_built"` // the base was built in this run (false: reused)
	// BaseOnDemand says the base was compiled only where a warning asked
	// (Options.BaseBuild), not built in full.
	BaseOnDemand bool `json:"base_on_demand,omitempty"`
	// BaseAsked is, on demand, how many of the base's objects were
	// compiled for the questions (in this run or an earlier one of the
	// same base); BaseWhole says a question needed the whole base, built
	// and linked in full.
	BaseAsked int     `json:"base_asked,omitempty"`
	BaseWhole bool    `json:"base_whole,omitempty"`
	BaseError string  `json:"base_error,omitempty"`
	BaseSecs  float64 `json:"base_seconds"`
	// BaseCPUSecs is the CPU time (user and system) of the base build's
	// make and compilers, 0 when the base was not built in this run.
	BaseCPUSecs float64 `json:"base_cpu_seconds,omitempty"`
	// CPUSecs is the CPU time (user and system) of the builds this
	// configuration ran in this run: its makes (base, series, steps,
	// olddefconfig) and the tools the base's questions ran.
	CPUSecs  float64  `json:"cpu_seconds,omitempty"`
	Flags    []string `json:"flags"`              // the make variables of its builds
	Compiler string   `json:"compiler,omitempty"` // the first line of its --version
	Cells    []Cell   `json:"cells"`              // Cells[k-1] is patch k
	// Check marks a column that is a check on the lines the series adds
	// (CheckW2, CheckKernelDoc), not a configuration: its warnings are
	// reported, and fail nothing.
	Check bool `json:"check,omitempty"`
	// In is the configuration a check compiles in (W=2's).
	In string `json:"in,omitempty"`
}

// PatchInfo names a patch row.
type PatchInfo struct {
	Number  int    `json:"number"`
	ID      string `json:"id"`
	Subject string `json:"subject"`
}

// Report is the patch x configuration table.
type Report struct {
	// Series names what was built as reports do: "v13", "x86 v2", "x86
	// v2 on v15 (posted on v16)" (spec.Revision.Name).
	Series  string         `json:"series,omitempty"`
	Version int            `json:"version"`
	Base    string         `json:"base"`
	Patches []PatchInfo    `json:"patches"`
	Configs []ConfigResult `json:"configs"`
	Passed  bool           `json:"passed"` // no FAIL anywhere
	Warned  bool           `json:"warned"` // a WARN somewhere
	Seconds float64        `json:"seconds"`
	Flags   []string       `json:"flags"` // extra make flags (W=1, C=1, CC=)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// cellText is a cell of the table: a failure that an earlier patch
// introduced and this one still has says since which patch.
func cellText(c Cell, patch int) string {
	switch c.Status {
	case Warn:
		return fmt.Sprintf("WARN %d", len(c.Warnings))
	case Fail:
		since := patch
		for _, e := range c.Errors {
			since = min(since, e.Since)
		}
		if since > 0 && since < patch {
			return fmt.Sprintf("FAIL (since %d)", since)
		}
	}
	return c.Status
}

// WriteText writes the table and, below it, every failure and new warning
// once, with the patch and the template or edit that produced its line.
func (r *Report) WriteText(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "PATCH\t")
	for _, c := range r.Configs {
		fmt.Fprintf(tw, "%s\t", c.Name)
	}
	fmt.Fprintln(tw, "SUBJECT")
	fmt.Fprint(tw, " 0 base\t")
	for _, c := range r.Configs {
		s := "built"
		switch {
		case c.Check:
			s = "-"
		case c.BaseError != "":
			s = "FAIL"
		case c.BaseOnDemand && c.BaseWhole:
			s = "whole"
		case c.BaseOnDemand:
			s = fmt.Sprintf("asked %d", c.BaseAsked)
		case !c.BaseBuilt:
			s = "cached"
		}
		fmt.Fprintf(tw, "%s\t", s)
	}
	fmt.Fprintln(tw, r.Base)
	for i, p := range r.Patches {
		fmt.Fprintf(tw, "%2d %s\t", p.Number, p.ID)
		for _, c := range r.Configs {
			s := Skip
			if i < len(c.Cells) {
				s = cellText(c.Cells[i], p.Number)
			}
			fmt.Fprintf(tw, "%s\t", s)
		}
		fmt.Fprintln(tw, trunc(p.Subject, 60))
	}
	tw.Flush()
	for _, c := range r.Configs {
		if c.BaseError != "" {
			fmt.Fprintf(w, "\n%s: the base does not build: %s\n", c.Name, c.BaseError)
		}
		said := map[string]bool{}
		for _, cell := range c.Cells {
			if cell.Skipped != "" && !said[cell.Skipped] {
				said[cell.Skipped] = true
				fmt.Fprintf(w, "\n%s: not checked (SKIP): %s\n", c.Name, cell.Skipped)
			}
		}
	}
	noted := map[string]bool{}
	for _, c := range r.Configs {
		for i, cell := range c.Cells {
			for _, n := range cell.StandIns {
				if !noted[n] {
					noted[n] = true
					fmt.Fprintf(w, "note: from patch %d: %s\n", i+1, n)
				}
			}
		}
	}
	type seen struct{ cfg, key string }
	done := map[seen]bool{}
	for i, p := range r.Patches {
		for _, c := range r.Configs {
			if i >= len(c.Cells) {
				continue
			}
			cell := c.Cells[i]
			for li, list := range [][]Problem{cell.Errors, cell.Warnings} {
				for _, pr := range list {
					k := seen{c.Name, pr.Key()}
					if done[k] {
						continue
					}
					done[k] = true
					fmt.Fprintf(w, "\npatch %d (%s), %s: %s\n", p.Number, p.ID, c.Name, pr.Diag.String())
					for _, l := range pr.Context {
						fmt.Fprintf(w, "      %s\n", l)
					}
					if pr.Object == LinkObject {
						fmt.Fprintf(w, "    linking vmlinux; %s\n", pr.Origin)
					} else if pr.Object != "" {
						fmt.Fprintf(w, "    compiling %s; %s\n", pr.Object, pr.Origin)
					} else {
						fmt.Fprintf(w, "    %s\n", pr.Origin)
					}
					for _, fr := range pr.Trace {
						by := "the base"
						if fr.Patch > 0 {
							by = fmt.Sprintf("patch %d", fr.Patch)
						}
						fmt.Fprintf(w, "    inlined from %s, line of %s\n", fr, by)
					}
					if pr.MovedFrom != "" {
						fmt.Fprintf(w, "    moved code: the base has this warning in %s, where patch %d removed the line\n", pr.MovedFrom, pr.Origin.Patch)
					}
					switch last := lastWith(c.Cells, i, pr.Key()); {
					case last == i+1:
						fmt.Fprintf(w, "    also at patch %d\n", last+1)
					case last > i+1:
						fmt.Fprintf(w, "    also at patches %d-%d\n", p.Number+1, last+1)
					}
					if li == 0 && cell.Forced != "" {
						fmt.Fprintf(w, "    note: %s\n", cell.Forced)
					}
				}
			}
		}
	}
	verdict := "PASS"
	switch {
	case !r.Passed:
		verdict = "FAIL"
	case r.Warned:
		verdict = "PASS with new warnings"
	}
	nf, nw, ncfg := 0, 0, 0
	for _, c := range r.Configs {
		if !c.Check {
			ncfg++
		}
		for _, cell := range c.Cells {
			switch cell.Status {
			case Fail:
				nf++
			case Warn:
				nw++
			}
		}
	}
	what := r.built()
	if r.Series != "" {
		what = r.Series + " on " + r.Base + ", " + what
	}
	fmt.Fprintf(w, "\n%s: %s x %d configurations, %d failed, %d with new warnings (%s; %s)\n",
		verdict, what, ncfg, nf, nw, strings.Join(r.Flags, " "), time.Duration(r.Seconds*float64(time.Second)).Round(time.Second))
}

// built says which patches were built: all of them, or, after --from,
// how many and which were applied without being built.
func (r *Report) built() string {
	first := 0 // index of the first patch some configuration built
	for first < len(r.Patches) {
		done := false
		for _, c := range r.Configs {
			if first < len(c.Cells) && c.Cells[first].Status != NotBuilt {
				done = true
			}
		}
		if done {
			break
		}
		first++
	}
	switch {
	case first == 0:
		return fmt.Sprintf("%d patches", len(r.Patches))
	case first == len(r.Patches):
		return fmt.Sprintf("0 of %d patches built", len(r.Patches))
	case first == 1:
		return fmt.Sprintf("%d of %d patches built (patch 1 applied without a build of its own, built with patch 2)", len(r.Patches)-first, len(r.Patches))
	}
	return fmt.Sprintf("%d of %d patches built (patches 1-%d applied without builds of their own, built with patch %d)",
		len(r.Patches)-first, len(r.Patches), first, first+1)
}

// lastWith returns the index of the last cell of the run of consecutive
// cells from i that have a problem with key k.
func lastWith(cells []Cell, i int, k string) int {
	last := i
	for j := i + 1; j < len(cells); j++ {
		found := false
		for _, list := range [][]Problem{cells[j].Errors, cells[j].Warnings} {
			for _, p := range list {
				if p.Key() == k {
					found = true
				}
			}
		}
		if !found {
			break
		}
		last = j
	}
	return last
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
