package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"kpatch/buildtest"
	"kpatch/plumbing/kernelsrc"
	"kpatch/plumbing/mail"
	"kpatch/plumbing/outdir"
	"kpatch/series"
	"kpatch/series/hooks"
	"kpatch/spec"
)

// command is one kpatch command. A name of two words ("test build") is a
// subcommand of the first.
type command struct {
	name  string
	short string
	run   func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists every command, in the order kpatch help shows them.
func commands() []command {
	return []command{
		{"gen", "write the series as a cover letter and numbered patches", cmdGen},
		{"verify", "check a series (generated or posted) for the review's rules and C invariants", cmdVerify},
		{"test qemu", "build the kernel with the series, boot it in QEMU, check every trace (test --qemu)", cmdTestQEMU},
		{"test build", "build every patch in each configuration that matters for it (test --build)", cmdTestBuild},
		{"unwind", "walk the user stack of a core dump or a QEMU stack snapshot", cmdUnwind},
		{"tree", "print the cached Debian linux-source-6.12 git tree, creating it once", cmdTree},
		{"spec", "write the built-in series description into a directory to edit", cmdSpec},
		{"series diff", "compare two versions of a series (git range-diff)", cmdSeriesDiff},
		{"series import", "write a posted series (mbox, thread) as patch files", cmdSeriesImport},
		{"series deps", "check a stacked series' base-commit and prerequisite-patch-ids (b4 prep --check-deps)", cmdSeriesDeps},
		{"revision new", "start the next revision in a spec copy (b4 prep --reroll)", cmdRevisionNew},
		{"trailers", "add review trailers from replies to a spec copy (b4 trailers -u)", cmdTrailers},
		{"send", "post the revision with git send-email and record its Message-Ids (b4 send)", cmdSend},
	}
}

const exitCodes = `Exit status: 0 success; 1 checks failed (or the work failed once started);
2 usage or bad input (an unknown flag or command, a missing argument, a flag
value out of range, an input that cannot be used); 130 interrupted. With --json a refusal is
also a JSON object on standard output: {"error": "...", "exit": N}.
`

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: kpatch <command> [flags] [arguments]\n\nkpatch regenerates, checks and tests the deferred user-space unwinding series.\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-14s %s\n", c.name, c.short)
	}
	fmt.Fprintf(w, "  %-14s %s\n", "help [CMD]", "list the commands, or print the flags of one")
	fmt.Fprintf(w, "\nFlags may come before or after the arguments; -- ends them.\nRun 'kpatch help <command>' (or 'kpatch <command> --help') for its flags,\n'kpatch --version' for the version.\n\n%s", exitCodes)
}

// graceAfterSignal is how long a command may take to stop after SIGINT or
// SIGTERM before kpatch exits without it. Every output is written to a
// temporary name and renamed into place, so an exit at any point leaves
// each one as it was or whole.
const graceAfterSignal = 800 * time.Millisecond

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// run runs kpatch with args and returns its exit status.
func run(args []string, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	code := dispatch(args, out, stderr)
	if code == exitOK && out.err != nil {
		fmt.Fprintf(stderr, "kpatch: writing to standard output: %v\n", out.err)
		return exitFailed
	}
	return code
}

func dispatch(args []string, stdout *checkedWriter, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help":
		usage(stdout)
		return exitOK
	case "--version", "-version":
		fmt.Fprintf(stdout, "kpatch version %s\n", version())
		return exitOK
	case "help":
		// git's convention: "kpatch help gen" is "kpatch gen --help".
		if len(args) == 1 {
			usage(stdout)
			return exitOK
		}
		if len(args) == 2 && args[1] == "help" { // git help help
			fmt.Fprint(stdout, helpHelp)
			return exitOK
		}
		c, rest, err := find(args[1:])
		if len(args) == 2 && err != nil && isGroup(args[1]) { // kpatch help series
			(&groupHelp{args[1]}).print(stdout)
			return exitOK
		}
		if err == nil && len(rest) > 0 {
			err = fmt.Errorf("too many arguments %q: give one command, e.g. kpatch help gen", args[1:])
		}
		if err != nil {
			fmt.Fprintf(stderr, "kpatch help: %v\n", err)
			return exitUsage
		}
		return runCommand(c, []string{"--help"}, stdout, stderr)
	}
	c, rest, err := find(args)
	var g *groupHelp
	switch {
	case errors.As(err, &g):
		g.print(stdout)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "kpatch: %v\n", err)
		if asksJSON(args) {
			writeJSONError(stdout, err.Error(), exitUsage, nil)
		}
		return exitUsage
	}
	return runCommand(c, rest, stdout, stderr)
}

// groupHelp is returned by find for "kpatch test --help" and the like:
// the subcommands of the group are listed.
type groupHelp struct{ group string }

func (g *groupHelp) Error() string { return "help" }

func (g *groupHelp) print(w io.Writer) {
	var subs []string
	for _, c := range commands() {
		if strings.HasPrefix(c.name, g.group+" ") {
			subs = append(subs, c.name)
		}
	}
	fmt.Fprintf(w, "usage: kpatch %s [flags]\n\n", strings.Join(subs, " | "))
	for _, c := range commands() {
		if strings.HasPrefix(c.name, g.group+" ") {
			fmt.Fprintf(w, "  %-14s %s\n", c.name, c.short)
		}
	}
	fmt.Fprintf(w, "\nRun 'kpatch help %s' for its flags.\n", subs[0])
}

// find returns the command args name and the arguments that follow it.
// "kpatch test --build ..." and "kpatch test --qemu ..." are found as
// the subcommands they name, as before there were subcommands.
func find(args []string) (command, []string, error) {
	all := commands()
	if len(args) > 1 {
		for _, c := range all {
			if c.name == args[0]+" "+args[1] {
				return c, args[2:], nil
			}
		}
	}
	var subs []string
	for _, c := range all {
		if c.name == args[0] {
			return c, args[1:], nil
		}
		if g, sub, ok := strings.Cut(c.name, " "); ok && g == args[0] {
			subs = append(subs, sub)
		}
	}
	if len(subs) == 0 {
		return command{}, nil, unknownCommand(args[0])
	}
	rest := args[1:]
	if args[0] == "test" {
		for _, sub := range []string{"build", "qemu"} {
			if wantsFlag(rest, sub) {
				c, _, _ := find([]string{"test", sub})
				return c, rest, nil
			}
		}
	}
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		if len(rest) > 0 && isHelp(rest[0]) {
			return command{}, nil, &groupHelp{args[0]}
		}
		return command{}, nil, fmt.Errorf("kpatch %s needs a subcommand: %s %s", args[0], args[0], strings.Join(subs, " or "+args[0]+" "))
	}
	if near := nearestWord(rest[0], subs); near != "" {
		return command{}, nil, fmt.Errorf("unknown subcommand %q of %s: did you mean %s %s?", rest[0], args[0], args[0], near)
	}
	return command{}, nil, fmt.Errorf("unknown subcommand %q of %s: give %s", rest[0], args[0], strings.Join(subs, " or "))
}

// unknownCommand is the error for a command kpatch does not have: the
// one meant when it is close, else where the commands are listed.
func unknownCommand(name string) error {
	words := []string{"help"}
	for _, c := range commands() {
		w, _, _ := strings.Cut(c.name, " ")
		words = append(words, w)
	}
	if strings.HasPrefix(name, "-") {
		words = []string{"--help", "--version"}
	}
	if near := nearestWord(name, words); near != "" {
		return fmt.Errorf("unknown command %q: did you mean %s? (kpatch help lists the commands)", name, near)
	}
	return fmt.Errorf("unknown command %q: kpatch help lists the commands", name)
}

// helpHelp is what kpatch help help prints.
const helpHelp = `usage: kpatch help [CMD]

List the commands, or print the usage, description and flags of command CMD
(kpatch help gen, kpatch help test build) on standard output: the same as
kpatch CMD --help. kpatch --version prints kpatch's version.
`

// version is kpatch's version as the build recorded it: the module's
// version, else the commit it was built from ("-dirty" when the work tree
// had changes), else "devel".
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return "devel (" + info.GoVersion + ")"
	}
	return "devel-" + rev + dirty + " (" + info.GoVersion + ")"
}

// isGroup reports whether name is the first word of subcommands.
func isGroup(name string) bool {
	for _, c := range commands() {
		if g, _, ok := strings.Cut(c.name, " "); ok && g == name {
			return true
		}
	}
	return false
}

// wantsFlag reports whether args set the boolean flag --name before the
// first "--".
func wantsFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || a == name+"=true" {
			return true
		}
	}
	return false
}

// wantsBuild reports whether the test command's arguments ask for --build.
func wantsBuild(args []string) bool { return wantsFlag(args, "build") }

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "--h" }

// errInterrupted is the error of a command stopped by SIGINT or SIGTERM.
var errInterrupted = errors.New("interrupted")

// runCommand runs one command with the signals SIGINT and SIGTERM turned
// into the cancellation of its context, and turns its result into the exit
// status and the messages described in the package documentation. On a
// signal, standard output and the command's standard error are closed to
// it before its context is cancelled: whatever it would print about the
// work it was doing (a boot's table of failed cases, a report) is not
// written; the frame writes the one line, and with --json the one object,
// that say it was interrupted.
func runCommand(c command, args []string, stdout *checkedWriter, stderr io.Writer) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmdErr := &gatedWriter{w: stderr}
	done := make(chan error, 1)
	go func() { done <- c.run(ctx, args, stdout, cmdErr) }()
	var err error
	select {
	case err = <-done:
	case <-sigs:
		stdout.stopped.Store(true)
		cmdErr.stopped.Store(true)
		cancel()
		signal.Stop(sigs) // a second Ctrl-C ends kpatch at once
		select {
		case <-done:
		case <-time.After(graceAfterSignal):
		}
		err = errInterrupted
	}
	prefix := "kpatch " + c.name
	code, msg := exitOK, ""
	var (
		help  *helpRequest
		use   *usageError
		opts  *buildtest.OptionsError
		found errFindings
		shown *jsonShown
	)
	switch {
	case err == nil:
		if stdout.err != nil {
			code, msg = exitFailed, "writing to standard output: "+stdout.err.Error()
		}
	case errors.As(err, &help):
		help.f.printUsage(stdout)
		if stdout.err != nil {
			code, msg = exitFailed, "writing to standard output: "+stdout.err.Error()
		}
	case errors.Is(err, errInterrupted) || ctx.Err() != nil:
		code, msg = exitInterrupted, "interrupted"
	case errors.As(err, &use):
		code, msg = exitUsage, use.msg
	case errors.As(err, &opts):
		code, msg = exitUsage, opts.Error()
	case errors.As(err, &found):
		return exitFailed // the report has said everything
	case stdout.err != nil && err == stdout.err:
		code, msg = exitFailed, "writing to standard output: "+stdout.err.Error()
	case isBadInput(err):
		code, msg = exitUsage, err.Error()
	default:
		code, msg = exitFailed, err.Error()
	}
	if code == exitOK {
		return code
	}
	fmt.Fprintf(stderr, "%s: %s\n", prefix, msg)
	if use != nil && use.f != nil {
		use.f.printSynopsis(stderr)
	}
	checksFailed := errors.Is(err, ErrTestFailed) || errors.Is(err, errBuildFailed)
	if code == exitInterrupted {
		if asksJSON(args) && stdout.err == nil {
			writeJSONError(stdout.w, msg, code, nil)
		}
		return code
	}
	if asksJSON(args) && !checksFailed && !errors.As(err, &shown) && stdout.err == nil {
		writeJSONError(stdout, msg, code, nil)
	}
	return code
}

// badInputs are the errors that say an input the command was given cannot
// be used: nothing was checked or written, and the fix is to give another
// (exit 2, as for usage errors), as opposed to checks that ran and failed.
// A missing file is not among them: one that vanishes while a build runs
// is a failure of the work (exit 1); an input the user named and that is
// missing is marked where it is read (badInput, or the package's own
// error, as kernelsrc's ErrNotKernel for a --tree that does not exist).
var badInputs = []error{
	kernelsrc.ErrNotKernel, kernelsrc.ErrUnknownRev, kernelsrc.ErrNotAGitRepo, kernelsrc.ErrDamaged,
	mail.ErrNoPatches, mail.ErrNotMail, mail.ErrNoMessages,
	spec.ErrNoRevision, spec.ErrNotStacked, spec.ErrAlreadyHas, spec.ErrInvalid,
	outdir.ErrForeign, outdir.ErrInTheWay, outdir.ErrNotDir, outdir.ErrExists, outdir.ErrCannotReplace,
	series.ErrBadBranchName, series.ErrBranchExists, series.ErrAlreadyApplied, series.ErrPathCollision,
	hooks.ErrAnchorMissing, hooks.ErrAnchorAmbiguous, hooks.ErrAlreadyPresent, hooks.ErrNoFile,
}

// isBadInput reports whether err says an input cannot be used.
func isBadInput(err error) bool {
	var input *inputError
	if errors.As(err, &input) {
		return true
	}
	for _, b := range badInputs {
		if errors.Is(err, b) {
			return true
		}
	}
	return false
}

// asksJSON reports whether args hold --json before the first "--".
func asksJSON(args []string) bool { return wantsFlag(args, "json") }

// writeJSONError prints {"error": msg, "exit": code} and the fields of
// extra, if any, on w.
func writeJSONError(w io.Writer, msg string, code int, extra map[string]any) error {
	obj := map[string]any{"error": msg, "exit": code}
	for k, v := range extra {
		obj[k] = v
	}
	return writeJSON(w, obj)
}

// jsonShown marks an error that the command has already printed as a
// JSON object on standard output.
type jsonShown struct{ err error }

func (j *jsonShown) Error() string { return j.err.Error() }
func (j *jsonShown) Unwrap() error { return j.err }

// checkedWriter is standard output: it keeps the first write error, so
// that a command whose output was lost (a full disk, /dev/full) fails
// even where it does not look at what Fprintf returns. Once stopped (on
// SIGINT or SIGTERM) it writes nothing more.
type checkedWriter struct {
	w       io.Writer
	err     error
	stopped atomic.Bool
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.stopped.Load() {
		return 0, errInterrupted
	}
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// gatedWriter is a command's standard error: once stopped (on SIGINT or
// SIGTERM) it writes nothing more.
type gatedWriter struct {
	w       io.Writer
	stopped atomic.Bool
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	if g.stopped.Load() {
		return 0, errInterrupted
	}
	return g.w.Write(p)
}
