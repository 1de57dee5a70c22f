// Command kpatch regenerates, checks and tests the "deferred user-space
// unwinding" kernel patch series from Go templates, and carries it to its
// next revision.
//
//	kpatch gen            write the series as mail, as git format-patch would
//	kpatch verify         check a series for the review's rules and C invariants
//	kpatch test --qemu    build, boot and check the series in QEMU
//	kpatch test --build   build every patch in three configurations
//	kpatch unwind         walk a user stack from a core dump or a snapshot
//	kpatch tree           print (and create once) the cached Debian 6.12 kernel tree
//	kpatch spec           write the built-in series description out for editing
//	kpatch series         range-diff two versions of a series; import a posted one
//	kpatch revision new   start the next revision in a spec copy
//	kpatch trailers       add Acked-by/Reviewed-by/Tested-by from replies to a spec copy
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

type command struct {
	name  string
	short string
	run   func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"gen", "write the series as a cover letter and numbered patches", cmdGen},
		{"unwind", "walk the user stack of a core dump or a QEMU stack snapshot", cmdUnwind},
		{"test", "build the kernel with the series, boot it in QEMU, check every trace", cmdTest},
		{"tree", "print the cached Debian linux-source-6.12 git tree, creating it once", cmdTree},
		{"spec", "write the built-in series description into a directory to edit", cmdSpec},
		{"verify", "check a series (generated or posted) for the review's rules and C invariants", cmdVerify},
		{"series", "diff two versions of a series (range-diff); import a posted series", cmdSeries},
		{"revision", "start the next revision in a spec copy (b4 prep --reroll)", cmdRevision},
		{"trailers", "add review trailers from replies to a spec copy (b4 trailers -u)", cmdTrailers},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: kpatch <command> [flags]\n\nkpatch regenerates, checks and tests the deferred user-space unwinding series.\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.short)
	}
	fmt.Fprintf(w, "\nRun 'kpatch <command> --help' for the flags of a command.\n")
}

// errUsage marks an error already explained by a usage message.
var errUsage = errors.New("usage")

// gcPercent is kpatch's GOGC: a gen run lives about 0.1 s and allocates
// about 25 MiB with 10 MiB live at most, so collecting at 150% growth
// instead of 100% saves a collection or two for about 0.5 MiB of peak
// memory (scripts/bench-gen.sh; GOGC in the environment still wins).
const gcPercent = 150

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	stop := startProfiles()
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "-help":
		usage(stdout)
		return 0
	case "help":
		// git's convention: "kpatch help gen" is "kpatch gen --help".
		if len(args) == 1 {
			usage(stdout)
			return 0
		}
		if len(args) > 2 {
			fmt.Fprintf(stderr, "kpatch help: too many arguments %q: give one command, e.g. kpatch help gen\n", args[1:])
			return 2
		}
		args = []string{args[1], "--help"}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return runCommand(c, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "kpatch: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// runCommand runs one command and turns its error into an exit status:
// 0, 1 for a failure (printed as one line), 2 for a usage error (already
// printed with the usage on stderr). A requested help (-h, --help) is
// printed on stdout with status 0, as for "kpatch --help"; the flag
// package prints help and usage errors alike to the flag set's output,
// so when the arguments ask for help that output is held back until the
// command's result says which it was.
func runCommand(c command, args []string, stdout, stderr io.Writer) int {
	var held *bytes.Buffer
	cmdErr := stderr
	if asksHelp(args) {
		held = new(bytes.Buffer)
		cmdErr = held
	}
	err := c.run(args, stdout, cmdErr)
	if held != nil {
		if err == nil || errors.Is(err, flag.ErrHelp) {
			stdout.Write(held.Bytes())
		} else {
			stderr.Write(held.Bytes())
		}
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, new(errFindings)):
		return 1
	case errors.Is(err, context.Canceled): // Ctrl-C, as a shell reports SIGINT
		fmt.Fprintf(stderr, "kpatch %s: interrupted\n", c.name)
		return 130
	}
	fmt.Fprintf(stderr, "kpatch %s: %v\n", c.name, err)
	return 1
}

// asksHelp reports whether args hold a help flag before the first "--".
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}

// newFlags returns a flag set that prints its usage with a description.
func newFlags(name, synopsis, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("kpatch "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: kpatch %s %s\n\n%s\n\nFlags:\n", name, synopsis, about)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns a flag error into errUsage (the flag
// package has already printed it with the usage).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "kpatch: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	return nil
}
