package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"kpatch/series"
)

// flagSet is the one flag parser of every command: the flag package's,
// with flags taken before, between and after the positional arguments (as
// git takes them; "--" ends the flags), a one-letter flag's value attached
// as git format-patch takes it (-v12, -oDIR), nothing printed while
// parsing, and the usage printed once by the frame (cli.go) where it
// belongs: on standard output when asked for, on standard error (its
// synopsis only) after a usage error.
type flagSet struct {
	*flag.FlagSet
	name     string // "gen", "test build"
	synopsis string // what follows "usage: kpatch NAME "
	about    string // what the command does
	hidden   map[string]bool
}

// newFlags returns the flag set of command name.
func newFlags(name, synopsis, about string) *flagSet {
	fs := flag.NewFlagSet("kpatch "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, name: name, synopsis: synopsis, about: about, hidden: map[string]bool{}}
}

// hide leaves the flag name out of the help: a flag that is part of how
// the command was named (test --build), not one to give it.
func (f *flagSet) hide(name string) { f.hidden[name] = true }

// dashed is a flag's name as it is typed: -v, -o, --base.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// printUsage prints the command's usage, description and flags.
func (f *flagSet) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: kpatch %s %s\n\n%s\n\nFlags:\n", f.name, f.synopsis, f.about)
	f.printFlags(w)
	fmt.Fprintf(w, "\n%s", exitCodes)
}

// printFlags lists the flags as git's help does, "--base string" and
// "-v int", each with its description indented below it and its default
// when that is not the zero value; hidden flags are left out.
func (f *flagSet) printFlags(w io.Writer) {
	var b strings.Builder
	f.VisitAll(func(fl *flag.Flag) {
		if f.hidden[fl.Name] {
			return
		}
		fmt.Fprintf(&b, "  %s", dashed(fl.Name))
		name, usage := flag.UnquoteUsage(fl)
		if name != "" {
			b.WriteString(" " + name)
		}
		b.WriteString("\n    \t")
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := fl.DefValue; d != "" && d != "0" && d != "false" && d != "0s" {
			if name == "string" {
				d = strconv.Quote(d)
			}
			fmt.Fprintf(&b, " (default %s)", d)
		}
		b.WriteString("\n")
	})
	io.WriteString(w, b.String())
}

// printSynopsis prints the usage line of the command and where its flags
// are listed: what a usage error is followed by.
func (f *flagSet) printSynopsis(w io.Writer) {
	fmt.Fprintf(w, "usage: kpatch %s %s\nRun 'kpatch help %s' for its flags.\n", f.name, f.synopsis, f.name)
}

// parse parses args and returns the positional arguments, of which there
// must be at least min and at most max (max < 0: no limit). It returns a
// *helpRequest for -h or --help and a *usageError for anything else wrong.
func (f *flagSet) parse(args []string, min, max int) ([]string, error) {
	args = f.splitAttached(args)
	all := args
	var pos []string
	for {
		err := f.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return nil, &helpRequest{f}
		}
		if err != nil {
			return nil, f.usageError("%s", f.explain(err, all))
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

// splitAttached turns a one-letter flag with its value attached, as git
// takes it (-v12, -oDIR), into the flag and its value, before "--". A
// word that is a flag of its own (-verbose) stays as it is.
func (f *flagSet) splitAttached(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && !strings.Contains(a, "=") {
			if fl := f.Lookup(a[1:2]); fl != nil && f.Lookup(a[1:]) == nil {
				if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
					out = append(out, a[:2], a[2:])
					continue
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// flagErrors match the flag package's parse errors, to say them with the
// flag as it was typed.
var flagErrors = []struct {
	re   *regexp.Regexp
	say  func(typed string, m []string) string
	name int // the submatch holding the flag's name
}{
	{regexp.MustCompile(`^flag provided but not defined: -(.*)$`), nil, 1},
	{regexp.MustCompile(`^invalid value "(.*)" for flag -([^:]*): (.*)$`), func(typed string, m []string) string {
		why := m[3]
		if why == "parse error" {
			why = "not a number"
		}
		return fmt.Sprintf("%s %q: %s", typed, m[1], why)
	}, 2},
	{regexp.MustCompile(`^invalid boolean value "(.*)" for -([^:]*): (.*)$`), func(typed string, m []string) string {
		return fmt.Sprintf("%s=%s: want true or false", typed, m[1])
	}, 2},
	{regexp.MustCompile(`^flag needs an argument: -(.*)$`), func(typed string, m []string) string {
		return fmt.Sprintf("%s needs a value", typed)
	}, 1},
}

// explain turns a parse error of the flag package into kpatch's words:
// the flag as the user typed it (--bsae, not -bsae) and, for a flag the
// command does not have, the one meant when it is close.
func (f *flagSet) explain(err error, args []string) string {
	msg := err.Error()
	for _, fe := range flagErrors {
		m := fe.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		name := m[fe.name]
		typed := typedFlag(name, args)
		if fe.say != nil {
			return fe.say(typed, m)
		}
		msg = "unknown flag " + typed
		if near := f.nearest(name); near != "" {
			msg += ": did you mean " + dashed(near) + "?"
		}
		return msg
	}
	return msg
}

// typedFlag returns how the flag name was typed in args: "--bsae" or
// "-bsae", without a value after "=".
func typedFlag(name string, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		t, _, _ := strings.Cut(a, "=")
		if strings.TrimLeft(t, "-") == name && strings.HasPrefix(t, "-") {
			return t
		}
	}
	return dashed(name)
}

// nearest returns the flag of f that name was most likely meant to be:
// the one it is a prefix of, or the one at the smallest edit distance
// (letters swapped counting as one edit, as git's "did you mean" counts
// them), if that is small for the name's length; "" when none is.
func (f *flagSet) nearest(name string) string {
	var names []string
	f.VisitAll(func(fl *flag.Flag) {
		if !f.hidden[fl.Name] && len(fl.Name) > 1 {
			names = append(names, fl.Name)
		}
	})
	return nearestWord(name, names)
}

// nearestWord returns the word of words that w was most likely meant to
// be, or "" when none is close (see flagSet.nearest).
func nearestWord(w string, words []string) string {
	best, bestD, ties := "", len(w)/3+1, 0
	if bestD > 2 {
		bestD = 2
	}
	var prefixed []string
	for _, c := range words {
		if len(w) >= 3 && strings.HasPrefix(c, w) {
			prefixed = append(prefixed, c)
		}
		switch d := editDistance(w, c); {
		case d < bestD || (d == bestD && best == ""):
			best, bestD, ties = c, d, 0
		case d == bestD:
			ties++
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	if ties > 0 {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of two neighbours.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// usageError returns a usage error that is printed with the synopsis.
func (f *flagSet) usageError(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), f: f}
}

// badUsage returns a usage error printed as one line: a flag value out of
// range, a required flag missing, flags that contradict each other.
func badUsage(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// usageError makes kpatch exit 2 after printing msg (and the synopsis of
// f, when set) on standard error.
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
	fs   *flagSet
	spec seriesFlagSpec
	// configured names the flags git config set (flag -> key), once
	// applyConfig has run.
	configured map[string]string

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
	stack    string // the default of --stack ("": the main series)
}

func (f *flagSet) seriesFlags(s seriesFlagSpec) *seriesFlags {
	if s.treeHelp == "" {
		s.treeHelp = "kernel tree: a git repository (clone, worktree or bare mirror), or a plain directory with --plain;\ndefault: git config kpatch.tree, else the working directory"
	}
	if s.baseHelp == "" {
		s.baseHelp = "base revision of --tree (tag, branch or commit); default: git config kpatch.base, else the base\nrecorded for the revision (kpatch tree --tags lists the Debian tree's)"
	}
	if s.verHelp == "" {
		s.verHelp = "revision of the series; default: the newest"
	}
	if s.specHelp == "" {
		s.specHelp = "series description directory (an edited copy of templates/linux; kpatch spec -o DIR writes one); default: the one built in"
	}
	sf := &seriesFlags{
		fs:      f,
		spec:    s,
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
		f.StringVar(sf.stack, "stack", s.stack, "the series `NAME` stacked on a revision of the main one (x86: the x86 patches\nposted on their own on top of v16); -v is then its revision; default: git config kpatch.stack\nwhen -v and --on are not given")
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
//
// Flags the user did not give take their defaults from git config first
// (kpatch.tree, kpatch.base, kpatch.stack: config.go).
func (sf *seriesFlags) selection(openTree bool) (*series.Selection, error) {
	sf.applyConfig()
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

// openTree opens --tree at --base as sel's tree; a base the tree lacks
// is refused naming the tags it has and how to give one.
func (sf *seriesFlags) openTree(sel *series.Selection) error {
	sf.applyConfig()
	if err := sel.OpenTree(*sf.tree, *sf.base, *sf.plain); err != nil {
		return sf.baseRefused(sel, err)
	}
	return nil
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

// absFlag makes the path a flag gave absolute, from the working
// directory, before anything runs in another directory (make runs in the
// unpacked source, where a relative --build-root would name a folder
// inside it); "" stays "" (the default).
func absFlag(name string, path *string) error {
	if *path == "" {
		return nil
	}
	abs, err := filepath.Abs(*path)
	if err != nil {
		return badUsage("%s %s: %v: give an absolute path", name, *path, err)
	}
	*path = abs
	return nil
}
