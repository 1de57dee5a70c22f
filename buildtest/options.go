package buildtest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// MaxJobs is the most make jobs Run starts: each is a compiler process,
// and more than this is a typing error, not a build farm.
const MaxJobs = 1024

// OptionsError is an Options value that Run refuses before it generates,
// unpacks or builds anything: a value out of range, values that
// contradict each other, a tool or compiler that is not installed. The
// message names the flag of kpatch test build and what to give instead.
type OptionsError struct{ msg string }

func (e *OptionsError) Error() string { return e.msg }

func optionsError(format string, args ...any) error {
	return &OptionsError{fmt.Sprintf(format, args...)}
}

// buildTools are the programs every configuration's build runs besides
// the compiler, with the Debian package of each.
var buildTools = []struct{ name, pkg string }{
	{"make", "make"},
	{"flex", "flex"},
	{"bison", "bison"},
	{"bc", "bc"},
	{"awk", "mawk"},
	{"ld", "binutils"},
	{"objcopy", "binutils"},
	{"perl", "perl"}, // scripts/kernel-doc, and scripts the build runs
}

// compilerWrappers run the compiler named after them ("ccache gcc").
var compilerWrappers = map[string]bool{"ccache": true, "distcc": true, "icecc": true, "sccache": true}

// lookPath is exec.LookPath; tests replace it.
var lookPath = exec.LookPath

// Check refuses what Run cannot honour, before anything expensive starts:
// jobs, patch range, configurations, --sparse, the compiler command and
// the build tools. What depends on the series (--from beyond its last
// patch) is checked by Run once the series is generated, still before
// any tree is unpacked.
func (o Options) Check() error {
	switch {
	case o.Jobs < 0:
		return optionsError("--jobs %d: give 1 or more", o.Jobs)
	case o.Jobs > MaxJobs:
		return optionsError("--jobs %d: at most %d make jobs (each runs a compiler); give the number of cores, or of a farm's slots", o.Jobs, MaxJobs)
	case o.Patches < 0:
		return optionsError("--patches %d: give the number of patches to build, or 0 for all", o.Patches)
	case o.From < 0:
		return optionsError("--from %d: give the first patch to build (1 or more), or 0 for all", o.From)
	case o.BaseBuild != "" && o.BaseBuild != BaseOnDemand && o.BaseBuild != BaseFull:
		return optionsError("--base-build %q: give %s (the base compiled where a warning asks) or %s (the whole base built first)", o.BaseBuild, BaseOnDemand, BaseFull)
	case o.Patches > 0 && o.From > o.Patches:
		return optionsError("--from %d is after the last patch built (--patches %d): nothing would be built; give --from %d at most", o.From, o.Patches, o.Patches)
	}
	var missing []string
	names := o.Configs
	if names == nil {
		names = DefaultConfigs
	}
	usesGCC := false
	for _, n := range names {
		c, err := ConfigNamed(n)
		if err != nil {
			return optionsError("--configs: %v", err)
		}
		usesGCC = usesGCC || c.Compiler == ""
		for _, t := range c.Tools {
			if _, err := lookPath(t.Name); err != nil {
				missing = appendUnique(missing, fmt.Sprintf("%s (Debian package %s) for the %s configuration", t.Name, t.Package, c.Name))
			}
		}
	}
	if o.Configs != nil && len(o.Configs) == 0 {
		return optionsError("--configs: no configuration given")
	}
	switch o.Sparse {
	case "", "auto", "no":
	case "yes":
		if _, err := lookPath("sparse"); err != nil {
			missing = append(missing, "sparse (Debian package sparse) for --sparse yes")
		}
	default:
		return optionsError("--sparse %q: give auto, yes or no", o.Sparse)
	}
	if err := o.checkCC(); err != nil {
		return err
	}
	if strings.TrimSpace(o.CC) == "" && usesGCC {
		if _, err := lookPath("gcc"); err != nil {
			missing = append(missing, "gcc (Debian package gcc)")
		}
	}
	for _, t := range buildTools {
		if _, err := lookPath(t.name); err != nil {
			missing = append(missing, fmt.Sprintf("%s (Debian package %s)", t.name, t.pkg))
		}
	}
	if len(missing) > 0 {
		return optionsError("missing %s: install them (or run scripts/setup.sh)", strings.Join(missing, ", "))
	}
	return nil
}

// checkCC checks the compiler command: its program, and the compiler
// after a wrapper such as ccache or distcc, must be installed.
func (o Options) checkCC() error {
	if o.CC == "" {
		return nil
	}
	f := strings.Fields(o.CC)
	if len(f) == 0 {
		return optionsError("--cc %q: give a compiler command, e.g. 'ccache gcc'", o.CC)
	}
	if _, err := lookPath(f[0]); err != nil {
		return optionsError("--cc %q: %s is not installed (or not in $PATH)", o.CC, f[0])
	}
	if !compilerWrappers[filepath.Base(f[0])] {
		return nil
	}
	if len(f) < 2 || strings.HasPrefix(f[1], "-") {
		return optionsError("--cc %q: give the compiler %s runs, e.g. '%s gcc'", o.CC, filepath.Base(f[0]), filepath.Base(f[0]))
	}
	if _, err := lookPath(f[1]); err != nil {
		return optionsError("--cc %q: the compiler %s is not installed (or not in $PATH)", o.CC, f[1])
	}
	return nil
}

// checkSeries refuses a patch range beyond the series' n patches.
func (o Options) checkSeries(n int) error {
	switch {
	case o.Patches > n:
		return optionsError("--patches %d: the series has %d patches", o.Patches, n)
	case o.From > n:
		return optionsError("--from %d: the series has %d patches, so nothing would be built; give --from %d at most", o.From, n, n)
	}
	return nil
}
