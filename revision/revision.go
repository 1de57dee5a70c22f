package revision

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"kpatch/plumbing/outdir"
	"kpatch/series"
	"kpatch/spec"
)

// Options says how to start the next revision.
type Options struct {
	SpecDir string    // the spec copy to extend
	Stack   string    // the stacked series to start a revision of ("x86-6.19"); "": the main series
	Base    string    // the base of the new revision; "" keeps the previous one's
	Date    time.Time // the new cover letter's date; zero: now
	Archive string    // link prefix, e.g. "https://lore.kernel.org/all/"; "" means that
}

// Result describes the revision written.
type Result struct {
	Name     string   // the new revision as reports name it: "v17", "x86-6.19 v2"
	Dir      string   // the new revision's directory
	Version  int      // its number
	Previous int      // the revision it starts from
	Files    []string // the files written, relative to the spec directory
	// Unposted says that the previous revision's posting is not recorded
	// (kpatch send records it): the links name the Message-Ids kpatch gen
	// gives its messages, not the archive's.
	Unposted bool
}

// ErrExists is returned when the next revision's directory already exists.
var ErrExists = errors.New("the next revision already exists")

// New writes revision N+1 of the spec in o.SpecDir from its newest
// revision N, through the spec's writer (spec.Writer): the new folder is
// made at once, and only when the spec loads with it.
func New(o Options) (*Result, error) {
	sp, err := series.LoadSpec(o.SpecDir)
	if errors.Is(err, outdir.ErrNotDir) {
		return nil, fmt.Errorf("%w: write a copy to edit with kpatch spec -o DIR", err)
	}
	if err != nil {
		return nil, err // a damaged copy: the error says what to mend
	}
	prev, err := sp.Select(0, o.Stack, 0)
	if err != nil {
		return nil, err
	}
	if o.Archive == "" {
		o.Archive = "https://lore.kernel.org/all/"
	}
	res := &Result{Version: prev.Version + 1, Previous: prev.Version}
	name := fmt.Sprintf("v%d", res.Version)
	res.Name = name
	if o.Stack != "" {
		name = fmt.Sprintf("%s-v%d", o.Stack, res.Version) // the stacked series' folders: NAME-vN
		res.Name = fmt.Sprintf("%s v%d", o.Stack, res.Version)
	}
	res.Dir = filepath.Join(o.SpecDir, name)
	if _, err := os.Stat(res.Dir); err == nil {
		return nil, fmt.Errorf("%s: %w: edit it, or remove it to start again", res.Dir, ErrExists)
	}
	res.Unposted = !prev.Posted()
	link := func(n int) string { return o.Archive + postedID(prev, n) + "/" }
	section := func(n int) string { return fmt.Sprintf("Changes since v%d: %s\n\n", prev.Version, link(n)) }

	w := spec.NewWriter(o.SpecDir)
	if err := w.AddRevision(prev.Dir, name); err != nil {
		return nil, err
	}
	if err := w.SetField(name, "Version", strconv.Itoa(res.Version)); err != nil {
		return nil, err
	}
	if err := w.ClearPosting(name); err != nil {
		return nil, err
	}
	if o.Base != "" {
		if err := w.SetField(name, "Base", o.Base); err != nil {
			return nil, err
		}
	}
	if o.Date.IsZero() {
		o.Date = time.Now().Truncate(time.Second)
	}
	if err := w.SetField(name, "Date", o.Date.Format(time.RFC1123Z)); err != nil {
		return nil, err
	}
	if err := w.AddCoverChanges(name, section(0)); err != nil {
		return nil, err
	}
	// Patches are declared once, in the revision that first has them: the
	// new revision's folder gets its order and each patch's notes, the new
	// section above the previous revision's.
	// A stacked series' own patches only, numbered as it is posted.
	for _, p := range prev.Patches[prev.Own:] {
		w.SetNotes(name, p.ID, strings.TrimRight(section(p.Number-prev.Own)+p.Changelog, "\n")+"\n")
	}
	// A revision kpatch cannot read is not written.
	if err := w.Write(); err != nil {
		return nil, err
	}
	for _, f := range w.Files() {
		res.Files = append(res.Files, filepath.FromSlash(f))
	}
	return res, nil
}

// postedID is the Message-Id that links message n of revision r (0: the
// cover letter) as posted: the one its header records, else its cover
// letter's (a revision posted before kpatch recorded every id), else,
// for a revision whose posting is not recorded, the one kpatch gen gives
// it.
func postedID(r *spec.Revision, n int) string {
	if id := r.PostedID(n); id != "" {
		return id
	}
	if id := r.PostedID(0); id != "" {
		return id
	}
	return series.MessageID(r, n)
}

// Spec returns the loaded revision, for callers that report on it.
func Spec(dir string, v int) (*spec.Revision, error) {
	sp, err := series.LoadSpec(dir)
	if err != nil {
		return nil, err
	}
	return sp.Revision(v)
}
