package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"kpatch/buildtest"
	"kpatch/series"
)

// cmdTestBuild implements "kpatch test build" (and "kpatch test --build").
func cmdTestBuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var names []string
	for _, c := range buildtest.Configs {
		names = append(names, c.Name)
	}
	fs := newFlags("test build", "[--tree DIR] [--base REV] [-v N] [--stack NAME] [--spec DIR] [--plain] [--configs LIST] [--cc CMD] [--jobs N] [--patches N] [--from N] [--summary] [--fail-on-new-warnings] [--json]",
		`Build every patch of the series in each configuration that matters for it,
as the kernel test robot and linux-next would after the series is posted.
--configs names them:
  `+strings.Join(names, ", ")+`
or robot for all of them; the default is `+strings.Join(buildtest.DefaultConfigs, ", ")+`.
Each configuration is built once in full at the series' last patch (W=1,
and C=1 in the x86 ones when sparse is installed) in
<cache>/build/matrix-<config>, from one source tree (<cache>/build/source),
reused across runs; then for each patch only the objects it affects are
compiled (the .c files it touches, the
objects whose kbuild dependency lists name a file it touches or a
configuration symbol whose value it changes); kcsan and kasan also link
vmlinux for objtool. Two more columns check the lines the series adds: W=2
warnings and scripts/kernel-doc -Wall on the files it creates. The report is
a patch x configuration table: PASS, FAIL with the compiler's first error,
WARN with the warnings the base did not have (the base compiles, in
<config>/base, only the objects a warning is in question for; --base-build
full builds all of it first), each naming the patch and the
template line or edit that wrote the line; --summary prints the robot's
summary instead. Exit status 1 when a patch fails in a configuration, and
with --fail-on-new-warnings also when a patch adds a warning. Every
flag, the tools and --cc are checked before anything is generated, unpacked
or built. "kpatch test --build" is the same command.`)
	fs.Bool("build", true, "this command (kpatch test --build is kpatch test build)")
	fs.hide("build")
	sf := fs.seriesFlags(seriesFlagSpec{tree: "."})
	configs := fs.String("configs", strings.Join(buildtest.DefaultConfigs, ","), "configurations to build, comma-separated ("+strings.Join(names, ", ")+"; robot: all)")
	fs.Var(aliasFlag{fs.Lookup("configs")}, "config", "the same as --configs")
	cc := fs.String("cc", "", "compiler command for make's CC, e.g. 'ccache gcc' or 'distcc gcc' (default: make's)")
	jobs := fs.Int("jobs", 2, fmt.Sprintf("make jobs in all (1 to %d); configurations build in parallel when there are 2 jobs or more for each", buildtest.MaxJobs))
	patches := fs.Int("patches", 0, "build only the first N patches (0: all)")
	from := fs.Int("from", 0, "apply patches before N without building them; patch N builds what patches 1..N affect together")
	sparse := fs.String("sparse", "auto", "run sparse (make C=1) on the compiled objects: auto (when installed), yes or no")
	buildRoot := fs.String("build-root", "", "directory of the build trees (default <cache>/build)")
	baseBuild := fs.String("base-build", buildtest.BaseOnDemand, "how the base's warnings are known: "+buildtest.BaseOnDemand+" (compile at the base the objects a warning asks about) or "+buildtest.BaseFull+" (build the whole base first)")
	verbose := fs.Int("verbose", 0, "verbosity: 0 a line per patch, 1 more make progress, 2 make's output")
	failOnNew := fs.Bool("fail-on-new-warnings", false, "exit 1 also when the robot's summary would say BUILD REGRESSION for warnings alone:\na patch adds a warning the base did not have (CI that fails on new warnings)")
	summary := fs.Bool("summary", false, "print the kernel test robot's summary (BUILD SUCCESS or BUILD REGRESSION, each new warning with file:line, configuration and patch) instead of the table")
	asJSON := fs.jsonFlag()
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	if *jobs < 1 {
		return badUsage("--jobs must be 1 or more")
	}
	if err := absFlag("--build-root", buildRoot); err != nil {
		return err
	}
	if *verbose < 0 || *verbose > 2 {
		return badUsage("--verbose %d: must be 0, 1 or 2", *verbose)
	}
	cfgs := []string{}
	for _, c := range strings.Split(*configs, ",") {
		if c = strings.TrimSpace(c); c != "" {
			cfgs = append(cfgs, c)
		}
	}
	if len(cfgs) > 0 {
		expanded, err := buildtest.ExpandConfigs(cfgs)
		if err != nil {
			return badUsage("--configs: %v", err)
		}
		cfgs = expanded
	}
	o := buildtest.Options{
		BuildRoot: *buildRoot, Configs: cfgs, Patches: *patches, From: *from, Jobs: *jobs, CC: *cc, Sparse: *sparse,
		Log: stderr, Verbose: *verbose, BaseBuild: *baseBuild,
	}
	if err := o.Check(); err != nil { // before the series is generated
		return err
	}
	sel, err := sf.selection(true)
	if err != nil {
		return err
	}
	s, err := series.Generate(ctx, sel)
	if err != nil {
		return err
	}
	rep, err := buildtest.Run(ctx, s, o)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errInterrupted // the report is of work cut short: none is printed
	}
	if *summary && !*asJSON {
		rep.WriteSummary(stdout)
	} else if err := printReport(stdout, rep, *asJSON); err != nil {
		return err
	}
	return buildVerdict(rep, *failOnNew)
}

// buildVerdict is the exit of kpatch test build after its report: 1 when
// a patch fails in a configuration, and with --fail-on-new-warnings also
// when a patch adds a warning the base did not have (the robot's BUILD
// REGRESSION).
func buildVerdict(rep *buildtest.Report, failOnNew bool) error {
	if !rep.Passed {
		return errBuildFailed
	}
	if failOnNew && rep.Regression() {
		return errNewWarnings
	}
	return nil
}

// errNewWarnings is returned under --fail-on-new-warnings when a patch
// adds a warning. It is a failed check as errBuildFailed is (exit 1, the
// report has said everything, no JSON error after it).
var errNewWarnings error = newWarnings{}

type newWarnings struct{}

func (newWarnings) Error() string {
	return "BUILD REGRESSION: a patch adds a warning the base did not have (--fail-on-new-warnings)"
}

func (newWarnings) Is(target error) bool { return target == errBuildFailed }

// errBuildFailed is returned when a patch did not build in a configuration.
var errBuildFailed = errors.New("a patch does not build in a configuration (see the table above)")

// aliasFlag is a second name of a flag: setting it sets the flag.
type aliasFlag struct{ f *flag.Flag }

func (a aliasFlag) String() string {
	if a.f == nil {
		return ""
	}
	return a.f.Value.String()
}

func (a aliasFlag) Set(s string) error { return a.f.Value.Set(s) }
