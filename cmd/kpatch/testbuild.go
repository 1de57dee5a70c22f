package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"kpatch/buildtest"
)

// wantsBuild reports whether the test command's arguments ask for --build.
func wantsBuild(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--build" || a == "-build" || strings.HasPrefix(a, "--build=") || strings.HasPrefix(a, "-build=") {
			return a == "--build" || a == "-build" || strings.HasSuffix(a, "=true")
		}
	}
	return false
}

// cmdTestBuild implements "kpatch test --build".
func cmdTestBuild(args []string, stdout, stderr io.Writer) error {
	var names []string
	for _, c := range buildtest.Configs {
		names = append(names, c.Name)
	}
	fs := newFlags("test --build", "[--tree DIR] [--base REV] [-v N] [--spec DIR] [--plain] [--config LIST] [--cc CMD] [--jobs N] [--json]",
		`Build every patch of the series in each configuration that matters for it,
as the kernel test robot would after the series is posted: `+strings.Join(names, ", ")+`.
Each configuration is built once in full at the base (W=1, and C=1 when sparse
is installed) in <cache>/build/matrix-<config>, reused across runs; then for
each patch only the objects it affects are compiled (the .c files it touches,
the objects whose kbuild dependency lists name a file it touches or a
configuration symbol whose value it changes). The report is a patch x
configuration table: PASS, FAIL with the compiler's first error, WARN with the
warnings the base did not have, each naming the patch and the template line or
edit that wrote the line. Exit status 1 when a patch fails in a configuration.`, stderr)
	fs.Bool("build", true, "build every patch in every configuration (this mode)")
	tree := fs.String("tree", ".", "kernel tree: a git repository, or a plain directory with --plain")
	base := fs.String("base", "", "base revision (default: the base recorded for the revision)")
	version := fs.Int("v", 0, "revision of the series; default: the newest")
	specDir := fs.String("spec", "", "series description directory (an edited copy of templates/linux); default: the one built in")
	plain := fs.Bool("plain", false, "read --tree as a plain directory even if it is a git repository")
	configs := fs.String("config", strings.Join(names, ","), "configurations to build, comma-separated")
	cc := fs.String("cc", "", "compiler command for make's CC, e.g. 'ccache gcc' or 'distcc gcc' (default: make's)")
	jobs := fs.Int("jobs", 2, "make jobs in all; configurations build in parallel when there are 2 jobs or more for each")
	patches := fs.Int("patches", 0, "build only the first N patches (0: all)")
	from := fs.Int("from", 0, "apply patches before N without building them; patch N builds what patches 1..N affect together")
	sparse := fs.String("sparse", "auto", "run sparse (make C=1) on the compiled objects: auto (when installed), yes or no")
	buildRoot := fs.String("build-root", "", "directory of the build trees (default <cache>/build)")
	verbose := fs.Int("verbose", 0, "verbosity: 0 a line per patch, 1 more make progress, 2 make's output")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *sparse != "auto" && *sparse != "yes" && *sparse != "no" {
		fmt.Fprintf(stderr, "kpatch test: --sparse %q: give auto, yes or no\n", *sparse)
		return errUsage
	}
	if *jobs < 1 {
		fmt.Fprintln(stderr, "kpatch test: --jobs must be 1 or more")
		return errUsage
	}
	var cfgs []string
	for _, c := range strings.Split(*configs, ",") {
		if c = strings.TrimSpace(c); c != "" {
			if _, err := buildtest.ConfigNamed(c); err != nil {
				fmt.Fprintf(stderr, "kpatch test: --config: %v\n", err)
				return errUsage
			}
			cfgs = append(cfgs, c)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := buildtest.Run(ctx, buildtest.Options{
		Tree: *tree, Base: *base, SpecDir: *specDir, Version: *version, Plain: *plain,
		BuildRoot: *buildRoot, Configs: cfgs, Patches: *patches, From: *from, Jobs: *jobs, CC: *cc, Sparse: *sparse,
		Log: stderr, Verbose: *verbose,
	})
	if err != nil {
		return err
	}
	if err := printReport(stdout, rep, *asJSON); err != nil {
		return err
	}
	if !rep.Passed {
		return errBuildFailed
	}
	return nil
}

// errBuildFailed is returned when a patch did not build in a configuration.
var errBuildFailed = errors.New("a patch does not build in a configuration (see the table above)")
