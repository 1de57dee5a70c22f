package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"kpatch/series"
)

// flagSet is the one flag parser of every command: the flag package's,
// with flags taken before, between and after the positional arguments (as
// git takes them; "--" ends the flags), nothing printed while parsing,
// and the usage printed once by the frame (cli.go) where it belongs: on
// standard output when asked for, on standard error after a usage error.
type flagSet struct {
	*flag.FlagSet
	name     string // "gen", "test build"
	synopsis string // what follows "usage: kpatch NAME "
	about    string // what the command does
}

// newFlags returns the flag set of command name.
func newFlags(name, synopsis, about string) *flagSet {
	fs := flag.NewFlagSet("kpatch "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, name: name, synopsis: synopsis, about: about}
}

// printUsage prints the command's usage, description and flags.
func (f *flagSet) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: kpatch %s %s\n\n%s\n\nFlags:\n", f.name, f.synopsis, f.about)
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
	fmt.Fprintf(w, "\n%s", exitCodes)
}

// parse parses args and returns the positional arguments, of which there
// must be at least min and at most max (max < 0: no limit). It returns a
// *helpRequest for -h or --help and a *usageError for anything else wrong.
func (f *flagSet) parse(args []string, min, max int) ([]string, error) {
	var pos []string
	for {
		err := f.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return nil, &helpRequest{f}
		}
		if err != nil {
			return nil, f.usageError("%v", err)
		}
		rest := f.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...) // after "--" everything is an argument
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	switch {
	case max == 0 && len(pos) > 0:
		return nil, f.usageError("unexpected argument %q", pos[0])
	case max > 0 && len(pos) > max:
		return nil, f.usageError("too many arguments: want at most %d, got %d (%q)", max, len(pos), pos)
	case len(pos) < min:
		return nil, f.usageError("missing argument: want %d, got %d", min, len(pos))
	}
	return pos, nil
}

// usageError returns a usage error that is printed with the usage.
func (f *flagSet) usageError(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), f: f}
}

// badUsage returns a usage error printed as one line: a flag value out of
// range, a required flag missing, flags that contradict each other.
func badUsage(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// usageError makes kpatch exit 2 after printing msg (and the usage of f,
// when set) on standard error.
type usageError struct {
	msg string
	f   *flagSet
}

func (u *usageError) Error() string { return u.msg }

// inputError makes kpatch exit 2 after printing its message as one line:
// input the command could not read, so that nothing was checked (as
// opposed to checks that ran and failed, exit 1).
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// badInput marks err as input the command could not read (exit 2).
func badInput(err error) error { return &inputError{err} }

// helpRequest makes kpatch print the usage of f on standard output and
// exit 0.
type helpRequest struct{ f *flagSet }

func (h *helpRequest) Error() string { return "help requested" }

// seriesFlags are the flags every command that generates the series takes,
// defined here once: which tree, at which base, which revision (of which
// stacked series), from which series description, and whether the tree is
// read as a plain directory.
type seriesFlags struct {
	tree    *string
	base    *string
	version *int
	stack   *string
	on      *revisionValue
	specDir *string
	plain   *bool
}

// seriesFlagSpec says which of seriesFlags a command takes, with what
// default tree, and any words of its own for --tree and --spec.
type seriesFlagSpec struct {
	tree     string // the default of --tree
	treeHelp string // "" for the common text
	baseHelp string // "" for the common text
	specHelp string // "" for the common text
	verHelp  string // "" for the common text of -v
	noTree   bool   // the command reads no tree (nor --plain)
	noPlain  bool   // the command reads git trees only
	noVer    bool   // the command takes no -v (nor --stack)
	noStack  bool   // the command takes no --stack
}

func (f *flagSet) seriesFlags(s seriesFlagSpec) *seriesFlags {
	if s.treeHelp == "" {
		s.treeHelp = "kernel tree: a git repository (clone, worktree or bare mirror), or a plain directory with --plain"
	}
	if s.baseHelp == "" {
		s.baseHelp = "base revision of --tree (tag, branch or commit); default: the base recorded for the revision"
	}
	if s.verHelp == "" {
		s.verHelp = "revision of the series; default: the newest"
	}
	if s.specHelp == "" {
		s.specHelp = "series description directory (an edited copy of templates/linux; kpatch spec -o DIR writes one); default: the one built in"
	}
	sf := &seriesFlags{
		tree:    new(string),
		base:    f.String("base", "", s.baseHelp),
		specDir: f.String("spec", "", s.specHelp),
		version: new(int),
		stack:   new(string),
		on:      new(revisionValue),
		plain:   new(bool),
	}
	if !s.noTree {
		f.StringVar(sf.tree, "tree", s.tree, s.treeHelp)
	}
	if !s.noVer {
		f.IntVar(sf.version, "v", 0, s.verHelp)
	}
	if !s.noVer && !s.noStack {
		f.StringVar(sf.stack, "stack", "", "the series `NAME` stacked on a revision of the main one (x86: the x86 patches\nposted on their own on top of v16); -v is then its revision")
		f.Var(sf.on, "on", "with --stack: lay the stacked series on revision `vN` of the main one instead of the\none it was posted on (the x86 series on v15)")
	}
	if !s.noPlain && !s.noTree {
		f.BoolVar(sf.plain, "plain", false, "read --tree as a plain directory even if it is a git repository (--base then only labels it)")
	}
	return sf
}

// jsonFlag defines --json, the same for every command.
func (f *flagSet) jsonFlag() *bool {
	return f.Bool("json", false, `print the result as JSON; a refusal is then also {"error": "...", "exit": N} on standard output`)
}

// selection makes the flags' one series value: the series description
// loaded once and the revision selected (a -v, --stack or --on the spec
// does not have is refused here, before a command waits for a build
// directory or builds anything), and with openTree the tree opened at
// --base (default: the revision's recorded base).
func (sf *seriesFlags) selection(openTree bool) (*series.Selection, error) {
	sel, err := series.Select(*sf.specDir, *sf.version, *sf.stack, int(*sf.on))
	if err != nil {
		return nil, err
	}
	if openTree {
		if err := sf.openTree(sel); err != nil {
			return nil, err
		}
	}
	return sel, nil
}

// openTree opens --tree at --base as sel's tree.
func (sf *seriesFlags) openTree(sel *series.Selection) error {
	return sel.OpenTree(*sf.tree, *sf.base, *sf.plain)
}

// revisionValue is a flag naming a revision of the main series, "v15" or
// "15"; 0 when not given.
type revisionValue int

func (v *revisionValue) String() string {
	if *v == 0 {
		return ""
	}
	return fmt.Sprintf("v%d", int(*v))
}

func (v *revisionValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "v"))
	if err != nil || n <= 0 {
		return fmt.Errorf("want a revision like v15, got %q", s)
	}
	*v = revisionValue(n)
	return nil
}
