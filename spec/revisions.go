package spec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"
)

// parsed is a template file of the spec, parsed.
type parsed struct {
	src  string
	tmpl *template.Template
}

// loadRevisions loads the revisions whose series files are series, at
// once: rendering their declarations is the half of loading the spec
// that the template parsers leave to one core. The error is that of the
// first that fails, in the order of series.
func (s *Spec) loadRevisions(series []string, decls map[string]*decl) ([]*Revision, error) {
	return atOnce(series, func(d string) (*Revision, error) {
		return s.loadRevision(path.Dir(d), decls, nil)
	})
}

// parseFiles reads and parses the template files paths, in order; the
// error is that of the first that fails.
func parseFiles(fsys fs.FS, paths []string) ([]parsed, error) {
	return atOnce(paths, func(p string) (parsed, error) {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return parsed{}, err
		}
		t, err := parseTemplate(p, string(data))
		return parsed{src: p, tmpl: t}, err
	})
}

// atOnce returns f of every input, each run in a goroutine of its own,
// in the order of in; the error is that of the first input that fails.
// Loading the revisions and parsing their files at once took gen of v16
// from 69.0 to 67.4 ms wall (docs/benchmarks.md): small, but part of
// what keeps gen at or under git format-patch.
func atOnce[In, Out any](in []In, f func(In) (Out, error)) ([]Out, error) {
	out := make([]Out, len(in))
	errs := make([]error, len(in))
	var wg sync.WaitGroup
	for i, x := range in {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = f(x)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Revision returns revision v, or the newest when v is 0.
func (s *Spec) Revision(v int) (*Revision, error) {
	if v == 0 {
		return s.Revisions[len(s.Revisions)-1], nil
	}
	for _, r := range s.Revisions {
		if r.Version == v {
			return r, nil
		}
	}
	var have []string
	for _, r := range s.Revisions {
		have = append(have, "v"+strconv.Itoa(r.Version))
	}
	return nil, fmt.Errorf("v%d: %w (it has %s)", v, ErrNoRevision, strings.Join(have, ", "))
}

// loadRevision reads the revision in dir. For a stacked series, on (when
// not nil) replaces the prerequisite its series file names.
func (s *Spec) loadRevision(dir string, decls map[string]*decl, on *Revision) (*Revision, error) {
	src := dir + "/series"
	data, err := fs.ReadFile(s.fsys, src)
	if err != nil {
		return nil, err
	}
	r := &Revision{spec: s, Dir: dir}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	err = parseHeader(sc, src, &line, func(k, v string) error {
		var err error
		switch k {
		case "Version":
			r.Version, err = strconv.Atoi(v)
		case "Base":
			r.Base = v
		case "Subject":
			r.Subject = v
		case "From":
			r.From = v
		case "Date":
			r.Date, err = time.Parse(time.RFC1123Z, v)
		case "Message-Id-Domain":
			r.MessageIDDomain = v
		case "Change-Id":
			r.ChangeID = v
		case "Message-Ids":
			r.MessageIDs, err = parseMessageIDs(v)
		case "To":
			r.To = append(r.To, splitList(v)...)
		case "Cc":
			r.Cc = append(r.Cc, splitList(v)...)
		case "Selftest-Cases":
			return fmt.Errorf("Selftest-Cases is no longer read: name the cases in facts/selftest.tmpl (extra-cases), by revision")
		case "Prerequisite":
			var pv int
			if _, err := fmt.Sscanf(v, "v%d", &pv); err != nil {
				return fmt.Errorf("Prerequisite %q: want a revision of the main series, like v16", v)
			}
			pr, err := s.Revision(pv)
			if err != nil || pv == 0 {
				return fmt.Errorf("Prerequisite %q: the main series has no such revision", v)
			}
			r.Prerequisite = pr
		default:
			return fmt.Errorf("unknown field %q", k)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	if r.Version == 0 || r.Subject == "" || r.From == "" || r.Date.IsZero() {
		return nil, fmt.Errorf("%s: Version, Subject, From and Date are required", src)
	}
	if name, _, ok := strings.Cut(dir, "-v"); ok {
		r.Series = name
		if r.Prerequisite == nil {
			return nil, fmt.Errorf("%s: a stacked series names the revision it applies on: Prerequisite: vN", src)
		}
		r.PostedOn = r.Prerequisite
		if on != nil {
			r.Prerequisite = on
		}
		r.Own = len(r.Prerequisite.Patches)
	} else if r.Prerequisite != nil {
		return nil, fmt.Errorf("%s: only a stacked series (a NAME-vN folder) has a Prerequisite", src)
	}
	if dir != fmt.Sprintf("v%d", r.Version) && dir != fmt.Sprintf("%s-v%d", r.Series, r.Version) {
		return nil, fmt.Errorf("%s: Version %d in the folder of another revision", src, r.Version)
	}
	r.renders = fmt.Sprintf("%s@v%d:", dir, r.guardVersion())
	_, cover, _ := bytes.Cut(data, []byte("\n\n"))
	r.Cover = string(cover)

	slots, err := s.readOrder(dir + "/order")
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	r.Patches = append(r.Patches, r.prerequisitePatches()...)
	for i, slot := range slots {
		p := &Patch{Number: r.Own + i + 1}
		for j, id := range slot.ids {
			if prev, ok := seen[id]; ok {
				return nil, fmt.Errorf("%s: patch %q is listed twice (%s and line %d)", slot.src, id, prev, slot.line)
			}
			seen[id] = fmt.Sprintf("line %d", slot.line)
			d := decls[id]
			if d == nil {
				return nil, fmt.Errorf("%s: patch %q is not declared: write v%d/%s.patch", slot.src, id, r.Version, id)
			}
			q, err := d.render(r.renderData(0))
			if err != nil {
				return nil, err
			}
			if j == 0 {
				q.Number = p.Number
				*p = *q
				continue
			}
			p.Folded = append(p.Folded, id)
			p.Edits = append(p.Edits, q.Edits...)
		}
		notes := dir + "/" + p.ID + ".notes"
		if b, err := fs.ReadFile(s.fsys, notes); err == nil {
			p.Changelog = strings.TrimLeft(string(b), "\n")
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		r.Patches = append(r.Patches, p)
	}
	if len(r.Patches) == r.Own {
		return nil, fmt.Errorf("%s/order: no patches", dir)
	}
	if err := r.checkPosted(src); err != nil {
		return nil, err
	}
	ents, err := fs.ReadDir(s.fsys, dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		n := e.Name()
		switch {
		case n == "series" || n == "order" || strings.HasSuffix(n, ".patch"):
		case notesName.MatchString(n):
			id := strings.TrimSuffix(n, ".notes")
			if r.lead(id) == nil {
				return nil, fmt.Errorf("%s/%s: v%d has no patch %q that heads its slot in the order", dir, n, r.Version, id)
			}
		case strings.Contains(n, tmpMark):
			return nil, fmt.Errorf("%s/%s: a temporary file an interrupted kpatch trailers run left: run kpatch trailers on the copy again (it completes or clears that run's change)", dir, n)
		default:
			return nil, fmt.Errorf("%s/%s: unknown file in a revision folder (series, order, <id>.patch and <id>.notes are known)", dir, n)
		}
	}
	return r, nil
}

// prerequisitePatches returns the patches of the revision a stacked series
// applies on (none for the main series).
func (r *Revision) prerequisitePatches() []*Patch {
	if r.Prerequisite == nil {
		return nil
	}
	return r.Prerequisite.Patches
}

// guardVersion is the version that guards see: the prerequisite's for a
// stacked series, whose own versions count separately.
func (r *Revision) guardVersion() int {
	if r.Prerequisite != nil {
		return r.Prerequisite.Version
	}
	return r.Version
}

// Stack returns revision v of the series stacked under name (v 0: its
// newest).
func (s *Spec) Stack(name string, v int) (*Revision, error) {
	var have []string
	var newest *Revision
	for _, r := range s.Stacked {
		if r.Series != name {
			continue
		}
		if r.Version == v {
			return r, nil
		}
		newest = r
		have = append(have, "v"+strconv.Itoa(r.Version))
	}
	if v == 0 && newest != nil {
		return newest, nil
	}
	if len(have) == 0 {
		var names []string
		for _, r := range s.Stacked {
			if !slices.Contains(names, r.Series) {
				names = append(names, r.Series)
			}
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("no series %q is stacked on the main one: %w (it has no stacked series)", name, ErrNoRevision)
		}
		return nil, fmt.Errorf("no series %q is stacked on the main one: %w (it has %s)", name, ErrNoRevision, strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%s v%d: %w (it has %s)", name, v, ErrNoRevision, strings.Join(have, ", "))
}

// On returns the stacked series r laid on revision v of the main series
// instead of the one it was posted on, as a maintainer tries a series on
// an older or newer revision of what it depends on: the prerequisite's
// patches are v's, and r's own patches are rendered with v's guards
// (their number follows v's patches). v 0 or r's own prerequisite
// returns r.
func (r *Revision) On(v int) (*Revision, error) {
	if r.Prerequisite == nil {
		return nil, fmt.Errorf("v%d of the main series: %w", r.Version, ErrNotStacked)
	}
	if v == 0 || v == r.Prerequisite.Version {
		return r, nil
	}
	pr, err := r.spec.Revision(v)
	if err != nil {
		return nil, err
	}
	for _, own := range r.Patches[r.Own:] {
		for _, id := range append([]string{own.ID}, own.Folded...) {
			for _, p := range pr.Patches {
				if p.ID == id || slices.Contains(p.Folded, id) {
					return nil, fmt.Errorf("%s v%d: v%d has its patch %s already (patch %d): %w", r.Series, r.Version, v, id, p.Number, ErrAlreadyHas)
				}
			}
		}
	}
	lr, err := r.spec.loadRevision(r.Dir, r.spec.decls, pr)
	return lr, invalid(err)
}

// Select returns the revision a command names: revision v of the main
// series, or with stack revision v of the series stacked under that name,
// laid on revision on of the main series when on is not 0 (see On).
func (s *Spec) Select(v int, stack string, on int) (*Revision, error) {
	if stack == "" {
		if on != 0 {
			return nil, fmt.Errorf("v%d: %w", on, ErrNotStacked)
		}
		return s.Revision(v)
	}
	r, err := s.Stack(stack, v)
	if err != nil {
		return nil, err
	}
	return r.On(on)
}

// StackName is the name of the stacked series r is a revision of ("x86"
// for x86 v2), "" for the main series.
func (r *Revision) StackName() string {
	if r.Prerequisite == nil {
		return ""
	}
	return r.Series
}

// Name names the revision as reports do: "v16" for the main series, "x86
// v2 on v16" for a stacked one, and "x86 v2 on v15 (posted on v16)" for a
// stacked one laid on another revision than it was posted on.
func (r *Revision) Name() string {
	n := fmt.Sprintf("v%d", r.Version)
	if r.Series == "" || r.Prerequisite == nil {
		return n
	}
	n = fmt.Sprintf("%s %s on v%d", r.Series, n, r.Prerequisite.Version)
	if r.Moved() {
		n += fmt.Sprintf(" (posted on v%d)", r.PostedOn.Version)
	}
	return n
}

// Moved says whether a stacked series was laid on another revision than
// the one it was posted on (see On).
func (r *Revision) Moved() bool {
	return r.PostedOn != nil && r.Prerequisite != r.PostedOn
}

// lead returns the patch whose id (not a folded one) is id.
func (r *Revision) lead(id string) *Patch {
	for _, p := range r.Patches {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// slot is one line of an order file: a patch, or patches folded into one.
type slot struct {
	ids  []string
	src  string
	line int
}

var idWord = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// readOrder reads an order file: one patch a line, in posting order; "a +
// b" folds patch b into a; "#" starts a comment.
func (s *Spec) readOrder(src string) ([]slot, error) {
	data, err := fs.ReadFile(s.fsys, src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is missing: list the revision's patches in it, one id a line", src)
		}
		return nil, err
	}
	var out []slot
	for i, l := range strings.Split(string(data), "\n") {
		if c := strings.IndexByte(l, '#'); c >= 0 {
			l = l[:c]
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		sl := slot{src: src, line: i + 1}
		for _, id := range strings.Split(l, "+") {
			id = strings.TrimSpace(id)
			if !idWord.MatchString(id) {
				return nil, fmt.Errorf("%s:%d: want a patch id, or \"id + id\" for a fold, got %q", src, i+1, strings.TrimSpace(l))
			}
			sl.ids = append(sl.ids, id)
		}
		out = append(out, sl)
	}
	return out, nil
}

// HasStack reports whether a series is stacked on the main one under name.
func (s *Spec) HasStack(name string) bool {
	for _, r := range s.Stacked {
		if r.Series == name {
			return true
		}
	}
	return false
}
