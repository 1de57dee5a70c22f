package buildtest

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// finding is one new warning or error of the run, where it first
// appeared in one configuration or check.
type finding struct {
	p      Problem
	config string // the configuration or check
	patch  PatchInfo
	last   int // the last patch of the run of patches that have it
	// together: found at the first patch built, with the earlier ones
	// (--from): the patch is where it was found, not where it came from.
	together bool
}

// findings returns every error and new warning once per configuration,
// at the patch that introduced it (Since), errors first, then by file.
func (r *Report) findings() []finding {
	type key struct{ cfg, k string }
	done := map[key]bool{}
	var out []finding
	for _, c := range r.Configs {
		for i, cell := range c.Cells {
			if i >= len(r.Patches) {
				break
			}
			for _, list := range [][]Problem{cell.Errors, cell.Warnings} {
				for _, p := range list {
					k := key{c.Name, p.Key()}
					if done[k] {
						continue
					}
					done[k] = true
					together := i > 0 && c.Cells[i-1].Status == NotBuilt
					name := c.Name
					if c.In != "" {
						name += " (in " + c.In + ")"
					}
					out = append(out, finding{p: p, config: name, patch: r.Patches[i], last: r.Patches[lastWith(c.Cells, i, p.Key())].Number, together: together})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.p.Severity == "error") != (b.p.Severity == "error") {
			return a.p.Severity == "error"
		}
		return a.p.Diag.String() < b.p.Diag.String()
	})
	return out
}

// idRE turns what is not a word character of a diagnostic into the
// robot's dashes.
var idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_.()]+`) })

// warningID is the robot's short name of a diagnostic: the file with
// slashes as dashes, the severity, the message with its quotes, numbers
// and offsets left out ("kernel-unwind-user.c:warning:incorrect-type-in-argument").
func warningID(p Problem) string {
	m := hexRE().ReplaceAllString(p.Message, "")
	m = strings.NewReplacer("‘", "", "’", "", "'", "", "`", "", "\"", "").Replace(m)
	m = strings.Trim(idRE().ReplaceAllString(m, "-"), "-")
	return strings.ReplaceAll(p.File, "/", "-") + ":" + p.Severity + ":" + m
}

// location is file:line of a problem as a maintainer looks it up: for an
// objtool warning with its inlined lines, the line its origin names.
func location(p Problem) string {
	for i := len(p.Trace) - 1; i >= 0; i-- {
		if f := p.Trace[i]; f.Patch == p.Origin.Patch && f.Patch > 0 {
			return fmt.Sprintf("%s:%d", f.File, f.Line)
		}
	}
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return p.File
}

// WriteSummary writes the run as the kernel test robot's summary mail
// reads: BUILD SUCCESS or BUILD REGRESSION, every new error and warning
// with the configuration, the compiler's words, file:line and the patch
// that introduced it (the form a review is answered with), the ids
// grouped by configuration, and the configurations tested and skipped.
func (r *Report) WriteSummary(w io.Writer) {
	fs := r.findings()
	var fails, warns int
	for _, f := range fs {
		if f.p.Severity == "error" {
			fails++
		} else {
			warns++
		}
	}
	what := r.Series
	if what == "" {
		what = fmt.Sprintf("v%d", r.Version)
	}
	verdict := "BUILD SUCCESS"
	if len(fs) > 0 || !r.Passed {
		verdict = "BUILD REGRESSION"
	}
	fmt.Fprintf(w, "%s %s on %s (%s)\n\n", verdict, what, r.Base, r.built())
	if len(fs) > 0 {
		fmt.Fprintf(w, "Error/Warning: (new ones, not in the base: %d errors, %d warnings)\n", fails, warns)
		for _, f := range fs {
			fmt.Fprintf(w, "\n>> %s\n", f.p.Diag.String())
			for _, l := range f.p.Context {
				fmt.Fprintf(w, "   %s\n", l)
			}
			found := fmt.Sprintf("found at patch %d/%d", f.patch.Number, len(r.Patches))
			switch {
			case f.together:
				found = fmt.Sprintf("found building patches 1-%d together", f.patch.Number)
			case f.last > f.patch.Number:
				found += fmt.Sprintf(" and every patch to %d", f.last)
			case f.patch.Number < len(r.Patches):
				found += " only"
			}
			fmt.Fprintf(w, "   config: %s; %s\n", f.config, found)
			intro := f.patch
			if o := f.p.Origin.Patch; o > 0 && o <= len(r.Patches) {
				intro = r.Patches[o-1]
			}
			fmt.Fprintf(w, "   introduced by patch %d/%d %q", intro.Number, len(r.Patches), intro.Subject)
			if f.p.Origin.Patch > 0 {
				fmt.Fprintf(w, ", %s: %s", location(f.p), f.p.Origin)
			}
			fmt.Fprintln(w)
			for _, fr := range f.p.Trace {
				by := "the base"
				if fr.Patch > 0 {
					by = fmt.Sprintf("patch %d", fr.Patch)
				}
				fmt.Fprintf(w, "     inlined from %s, line of %s\n", fr, by)
			}
			if f.p.MovedFrom != "" {
				fmt.Fprintf(w, "   moved code: the base has it in %s\n", f.p.MovedFrom)
			}
		}
		fmt.Fprintf(w, "\nError/Warning ids grouped by configs:\n\n")
		byCfg := map[string][]string{}
		var cfgs []string
		for _, f := range fs {
			if byCfg[f.config] == nil {
				cfgs = append(cfgs, f.config)
			}
			byCfg[f.config] = append(byCfg[f.config], warningID(f.p))
		}
		sort.Strings(cfgs)
		for i, c := range cfgs {
			branch, pipe := "|-- ", "|   "
			if i == len(cfgs)-1 {
				branch, pipe = "`-- ", "    "
			}
			fmt.Fprintln(w, branch+c)
			ids := byCfg[c]
			sort.Strings(ids)
			for j, id := range ids {
				leaf := "|-- "
				if j == len(ids)-1 {
					leaf = "`-- "
				}
				fmt.Fprintln(w, pipe+leaf+id)
			}
		}
		fmt.Fprintln(w)
	}
	var tested, skipped, checks []ConfigResult
	for _, c := range r.Configs {
		if c.Check {
			checks = append(checks, c)
			continue
		}
		if c.BaseError != "" {
			skipped = append(skipped, c)
		} else {
			tested = append(tested, c)
		}
	}
	fmt.Fprintf(w, "elapsed time: %s\n\n", time.Duration(r.Seconds*float64(time.Second)).Round(time.Second))
	fmt.Fprintf(w, "configs tested: %d\nconfigs skipped: %d\n\n", len(tested), len(skipped))
	if len(fs) == 0 {
		fmt.Fprintf(w, "The following configs have been built successfully.\n\n")
	}
	fmt.Fprintln(w, "tested configs:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range tested {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, c.Arch, c.Compiler, strings.Join(c.Flags, " "))
	}
	tw.Flush()
	if len(checks) > 0 {
		fmt.Fprintln(w, "\nchecks of the lines the series adds:")
		for _, c := range checks {
			fmt.Fprintf(w, "%s: %s\n", c.Name, c.What)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w, "\nskipped configs (the base does not build):")
		for _, c := range skipped {
			fmt.Fprintf(w, "%s: %s\n", c.Name, c.BaseError)
		}
	}
}
