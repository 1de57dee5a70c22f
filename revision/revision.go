package revision

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"kpatch/plumbing/outdir"
	"kpatch/series"
	"kpatch/spec"
)

// Options says how to start the next revision.
type Options struct {
	SpecDir string    // the spec copy to extend
	Base    string    // the base of the new revision; "" keeps the previous one's
	Date    time.Time // the new cover letter's date; zero keeps the previous one's
	Archive string    // link prefix, e.g. "https://lore.kernel.org/all/"; "" means that
}

// Result describes the revision written.
type Result struct {
	Dir      string   // the new revision's directory
	Version  int      // its number
	Previous int      // the revision it starts from
	Files    []string // the files written, relative to the spec directory
}

// ErrExists is returned when the next revision's directory already exists.
var ErrExists = errors.New("the next revision already exists")

var (
	versionLine = regexp.MustCompile(`(?m)^Version: .*$`)
	baseLine    = regexp.MustCompile(`(?m)^Base: .*$`)
	dateLine    = regexp.MustCompile(`(?m)^Date: .*$`)
	changesLine = regexp.MustCompile(`(?m)^Changes (since|in) v\d+`)
)

// New writes revision N+1 of the spec in o.SpecDir from its newest
// revision N, atomically (package outdir's Create: a temporary directory
// renamed into place).
func New(o Options) (*Result, error) {
	sp, err := series.LoadSpec(o.SpecDir)
	if err != nil {
		return nil, fmt.Errorf("%w: write a copy to edit with kpatch spec -o DIR", err)
	}
	prev, err := sp.Revision(0)
	if err != nil {
		return nil, err
	}
	if o.Archive == "" {
		o.Archive = "https://lore.kernel.org/all/"
	}
	res := &Result{Version: prev.Version + 1, Previous: prev.Version}
	name := fmt.Sprintf("v%d", res.Version)
	res.Dir = filepath.Join(o.SpecDir, name)
	if _, err := os.Stat(res.Dir); err == nil {
		return nil, fmt.Errorf("%s: %w: edit it, or remove it to start again", res.Dir, ErrExists)
	}
	srcDir := filepath.Join(o.SpecDir, fmt.Sprintf("v%d", prev.Version))
	link := func(n int) string { return o.Archive + series.MessageID(prev, n) + "/" }
	section := func(n int) string { return fmt.Sprintf("Changes since v%d: %s\n\n", prev.Version, link(n)) }

	err = outdir.Create(res.Dir, func(tmp string) error {
		data, err := os.ReadFile(filepath.Join(srcDir, "series"))
		if err != nil {
			return err
		}
		text := versionLine.ReplaceAllString(string(data), fmt.Sprintf("Version: %d", res.Version))
		if o.Base != "" {
			if baseLine.MatchString(text) {
				text = baseLine.ReplaceAllString(text, "Base: "+o.Base)
			} else {
				text = strings.Replace(text, "\n\n", "\nBase: "+o.Base+"\n\n", 1)
			}
		}
		if !o.Date.IsZero() {
			text = dateLine.ReplaceAllString(text, "Date: "+o.Date.Format(time.RFC1123Z))
		}
		text = addCoverSection(text, section(0))
		if err := os.WriteFile(filepath.Join(tmp, "series"), []byte(text), 0o644); err != nil {
			return err
		}
		res.Files = append(res.Files, filepath.Join(name, "series"))
		order, err := os.ReadFile(filepath.Join(srcDir, "order"))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, "order"), order, 0o644); err != nil {
			return err
		}
		res.Files = append(res.Files, filepath.Join(name, "order"))
		// Patches are declared once, in the revision that first has them: the
		// new revision's folder gets its order and each patch's notes, the new
		// section above the previous revision's.
		for _, p := range prev.Patches {
			base := p.ID + ".notes"
			out := strings.TrimRight(section(p.Number)+p.Changelog, "\n") + "\n"
			if err := os.WriteFile(filepath.Join(tmp, base), []byte(out), 0o644); err != nil {
				return err
			}
			res.Files = append(res.Files, filepath.Join(name, base))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The copy must load: a revision kpatch cannot read is not written.
	if _, err := series.LoadSpec(o.SpecDir); err != nil {
		os.RemoveAll(res.Dir)
		return nil, fmt.Errorf("the new revision does not load: %w", err)
	}
	return res, nil
}

// addCoverSection puts the new section before the first "Changes since"
// section of the cover letter, or at its end.
func addCoverSection(text, section string) string {
	if loc := changesLine.FindStringIndex(text); loc != nil {
		return text[:loc[0]] + section + text[loc[0]:]
	}
	return strings.TrimRight(text, "\n") + "\n\n" + strings.TrimRight(section, "\n") + "\n"
}

// Spec returns the loaded revision, for callers that report on it.
func Spec(dir string, v int) (*spec.Revision, error) {
	sp, err := series.LoadSpec(dir)
	if err != nil {
		return nil, err
	}
	return sp.Revision(v)
}
