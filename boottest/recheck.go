package boottest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"kpatch/plumbing/ktap"
	"kpatch/spec"
	"kpatch/unwind"
	"kpatch/unwind/symtab"
)

// NotSelected is the reason of the skip of a case the filter did not
// select (Options.Filter).
const NotSelected = "not selected"

// ErrNoPrograms is the error of ProgramSymbols when a directory holds
// neither the test programs nor their symbol tables.
var ErrNoPrograms = errors.New("no test programs")

// analyse checks a console of a boot of revision r: the one check of a
// boot (Run) and of a saved console (Recheck), so that both give the same
// report.
func analyse(r *spec.Revision, console []byte, syms map[string]*symtab.Table, cases []string) (*Analysis, error) {
	cfg, err := unwind.X86_64At(r, len(r.Patches))
	if err != nil {
		return nil, err
	}
	exp, err := ExpectationsOf(r)
	if err != nil {
		return nil, err
	}
	return CheckRevision(console, syms, cases, cfg, exp), nil
}

// OtherSeriesError is a saved console of a boot of another series than
// the one the flags select: its traces would be checked against the
// wrong walker.
type OtherSeriesError struct {
	Booted, Selected string // SeriesTag of each
}

// Error implements the error interface.
func (e *OtherSeriesError) Error() string {
	return fmt.Sprintf("the console is of a boot of %s (kpatch.series= on its command line), the flags select %s: give the -v/--stack of that boot", e.Booted, e.Selected)
}

// bootedSeries reads kpatch.series= from the kernel's "Command line:"
// line of a console; consoles of boots before the tag have none.
func bootedSeries(console []byte) (string, bool) {
	for _, l := range strings.Split(string(console), "\n") {
		_, cmd, ok := strings.Cut(l, "Command line: ")
		if !ok {
			continue
		}
		for _, w := range strings.Fields(cmd) {
			if v, ok := strings.CutPrefix(w, "kpatch.series="); ok {
				return v, true
			}
		}
		return "", false
	}
	return "", false
}

// casesIn returns the cases the programs of a saved console ran, in their
// order: the names of every mode's results (each mode runs the same
// table; a case missing from a plan is a KTAP problem), else Cases().
func casesIn(console []byte) []string {
	root, _ := ktap.Parse(bytes.NewReader(console))
	var out []string
	seen := map[string]bool{}
	for _, m := range Modes {
		sub := root.Find(m.Subtest)
		if sub == nil {
			continue
		}
		for _, t := range sub.Subtests {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, t.Name)
			}
		}
	}
	if len(out) == 0 {
		return Cases()
	}
	return out
}

// Recheck checks a saved console log of a boot of revision r again, as
// kunit.py parse reads a saved log: the same KTAP, the same comparison
// of every trace with the walker of r, the same report as the boot that
// wrote it, without building or booting anything. syms are the symbols
// of the programs that ran (ProgramSymbols); consoleLog names the log in
// the report. A console whose command line names another series
// (kpatch.series=) gives an *OtherSeriesError.
func Recheck(r *spec.Revision, console []byte, syms map[string]*symtab.Table, consoleLog string) (*Report, error) {
	if booted, ok := bootedSeries(console); ok && booted != SeriesTag(r.Name()) {
		return nil, &OtherSeriesError{Booted: booted, Selected: SeriesTag(r.Name())}
	}
	an, err := analyse(r, console, syms, casesIn(console))
	if err != nil {
		return nil, err
	}
	rep := &Report{Series: r.Name(), ConsoleLog: consoleLog, Rechecked: true}
	rep.fill(an)
	return rep, nil
}

// fill sets the report's verdict from the analysis of its console. The
// cases the guest did not select (kpatch test qemu --filter) are left out.
func (r *Report) fill(an *Analysis) {
	r.Cases = nil
	for _, c := range an.Cases {
		if c.Status == Skip && c.Reason == NotSelected {
			continue
		}
		r.Cases = append(r.Cases, c)
	}
	r.Problems, r.Splats = an.Problems, an.Splats
	r.Passed = an.Passed()
	for _, c := range an.Cases {
		if c.Bench != "" {
			r.Bench = append(r.Bench, c.Bench)
		}
	}
}

// ReadConsole reads a saved console log, plain or gzip-compressed (as
// the saved consoles in testdata are).
func ReadConsole(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out, err := io.ReadAll(z)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// ProgramSymbols reads the symbols of the test programs of a boot from
// dir: the programs themselves (dir/unwind_test64, or dir/progs/... as a
// build directory keeps them) or their symbol tables as nm writes them
// (dir/unwind_test64.syms). The error wraps ErrNoPrograms when dir holds
// none of them.
func ProgramSymbols(dir string) (map[string]*symtab.Table, error) {
	out := map[string]*symtab.Table{}
	for _, m := range Modes {
		tab := new(symtab.Table)
		var tried []string
		found := false
		for _, p := range []string{filepath.Join(dir, m.Program), filepath.Join(dir, "progs", m.Program)} {
			tried = append(tried, p)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			if err := tab.AddFile(p, 0); err != nil {
				return nil, err
			}
			found = true
			break
		}
		if !found {
			p := filepath.Join(dir, m.Program+".syms")
			tried = append(tried, p)
			f, err := os.Open(p)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return nil, fmt.Errorf("%w: none of %s", ErrNoPrograms, strings.Join(tried, ", "))
			case err != nil:
				return nil, err
			}
			err = tab.AddNM(m.Program, f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
		}
		out[m.Subtest] = tab
	}
	return out, nil
}
