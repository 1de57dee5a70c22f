package spec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"
	"time"

	"regexp"
)

// Spec is a parsed series description.
type Spec struct {
	fsys      fs.FS
	Revisions []*Revision      // in version order
	Stacked   []*Revision      // series stacked on a revision ("x86-v2/"), by name and version
	Templates map[string]*File // created files by path in the tree
	Facts     map[string]*File // facts/<name>.tmpl by name (see Revision.Facts)
	// VerifyRules is what the series declares for kpatch verify (its
	// verify-rules file; none declared when it has none).
	VerifyRules *VerifyRules
	decls       map[string]*decl // the patch declarations, kept for Revision.On
}

// File is the template of one file the series creates.
type File struct {
	Path string // path in the kernel tree
	Src  string // path in the spec
	tmpl *template.Template

	// ids are the patch ids the template's guards name, in a fixed order;
	// cacheable is false when it uses .Step or .Patch. What it renders
	// for a revision depends only on which of ids are applied, so renders
	// are kept by that (cache, under mu).
	ids       []string
	cacheable bool
	// createdBy is the id of the template's first action when that is
	// {{created "id"}} and the template has no other: before that patch
	// the file does not exist, and Render says so without running the
	// template.
	createdBy string
	mu        sync.Mutex
	cache     map[string]rendered
}

// rendered is one kept render of a File.
type rendered struct {
	out     []byte
	created int
}

// newFile makes the File of a parsed template.
func newFile(path, src string, t *template.Template) *File {
	f := &File{Path: path, Src: src, tmpl: t, cacheable: true, cache: map[string]rendered{}}
	if nodes := t.Tree.Root.Nodes; len(nodes) > 0 {
		if a, ok := nodes[0].(*parse.ActionNode); ok && len(a.Pipe.Decl) == 0 && len(a.Pipe.Cmds) == 1 {
			if args := a.Pipe.Cmds[0].Args; len(args) == 2 {
				fn, isFn := args[0].(*parse.IdentifierNode)
				id, isID := args[1].(*parse.StringNode)
				if isFn && isID && fn.Ident == "created" {
					f.createdBy = id.Text
				}
			}
		}
	}
	seen := map[string]bool{}
	createdCalls := 0
	walk(t.Tree.Root, func(c *parse.CommandNode) {
		for _, a := range c.Args {
			if fn, ok := a.(*parse.FieldNode); ok && (fn.Ident[0] == "Step" || fn.Ident[0] == "Patch") {
				f.cacheable = false
			}
		}
		if fn, ok := c.Args[0].(*parse.IdentifierNode); ok {
			if fn.Ident == "created" {
				createdCalls++
			}
			switch fn.Ident {
			case "since", "before", "between", "created":
				for _, a := range c.Args[1:] {
					if id, ok := a.(*parse.StringNode); ok && !seen[id.Text] {
						seen[id.Text] = true
						f.ids = append(f.ids, id.Text)
					}
				}
			}
		}
	})
	if createdCalls > 1 {
		f.createdBy = "" // a later {{created}} may name another patch
	}
	return f
}

// Revision is one posted version of the series.
type Revision struct {
	Version         int
	Base            string
	Subject         string
	From            string
	Date            time.Time
	MessageIDDomain string
	ChangeID        string
	To, Cc          []string
	Cover           string   // the cover letter text
	Patches         []*Patch // in order; a fold is one patch
	Dir             string   // its folder in the spec, "v12"
	// Series names a series stacked on a revision of the main one ("x86"
	// for the folder x86-v2); "" for the main series.
	Series string
	// Prerequisite is the revision a stacked series applies on, as b4's
	// prerequisites say; nil for the main series. Patches then starts
	// with the prerequisite's patches, and Own is their number: the
	// stacked series' own patches are Patches[Own:].
	Prerequisite *Revision
	Own          int
	// PostedOn is the prerequisite the stacked series' file names, the
	// revision it was posted on; it differs from Prerequisite when the
	// series was laid on another revision (On).
	PostedOn *Revision
	spec     *Spec
	// renders names the revision in the keys of its Files' kept renders:
	// its folder and the version its guards see (a stacked series laid
	// on another revision has the folder of the one posted).
	renders string
}

// Patch is the description of one patch of a revision.
type Patch struct {
	Number    int
	ID        string   // the id of the patch declaration
	Folded    []string // ids of the patches folded into this one, in order
	Author    string
	Subject   string
	Log       string // commit message with trailers, ending in a newline
	Changelog string // the notes below "---", "" if none
	Edits     []Edit
	Src       string // the declaration's path in the spec, "v11/user-api.patch"
}

// Edit is one edit to a file that exists in the kernel tree, placed by
// what it attaches to (see package hooks).
type Edit struct {
	Path string   // file in the tree
	Op   string   // operation name
	Args []string // operation arguments
	Text string   // text to insert, "" for operations that insert nothing
	Src  string   // where the edit is written: "v11/01-user-api.patch:42"
}

// ErrNotStacked is returned by On and Select for a revision to lay a
// series on when no stacked series is named.
var ErrNotStacked = errors.New("only a series stacked on another (--stack NAME) is laid on a revision")

// ErrAlreadyHas is returned by On for a revision that has patches of the
// series to be laid on it.
var ErrAlreadyHas = errors.New("a series is laid only on a revision without its patches")

// ErrNoRevision is returned by Revision for a version the spec lacks.
var ErrNoRevision = errors.New("no such revision in the series description")

// ErrInvalid is in every error of a series description that cannot be
// read: one Load refuses, or a template that fails when rendered.
var ErrInvalid = errors.New("the series description cannot be read")

// invalidError is an error of the series description: it reads as err,
// and is both err and ErrInvalid to errors.Is.
type invalidError struct{ err error }

func (e *invalidError) Error() string   { return e.err.Error() }
func (e *invalidError) Unwrap() []error { return []error{e.err, ErrInvalid} }

// invalid marks err, when not nil, as an error of the series description.
func invalid(err error) error {
	if err == nil || errors.Is(err, ErrInvalid) {
		return err
	}
	return &invalidError{err}
}

// Load reads a spec from fsys. Its errors are ErrInvalid.
func Load(fsys fs.FS) (*Spec, error) {
	s, err := load(fsys)
	return s, invalid(err)
}

func load(fsys fs.FS) (*Spec, error) {
	if err := complete(fsys); err != nil {
		return nil, err
	}
	s := &Spec{fsys: fsys, Templates: map[string]*File{}, Facts: map[string]*File{}}
	// The templates, the facts and the patch declarations are parsed at
	// once (text/template's parser is most of what loading costs); their
	// errors are reported in that order, as one after another would.
	var tmpls, facts []parsed
	var terr, ferr, derr error
	var decls map[string]*decl
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		var paths []string
		terr = fs.WalkDir(fsys, "files", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".tmpl") {
				paths = append(paths, p)
			}
			return nil
		})
		if terr == nil {
			tmpls, terr = parseFiles(fsys, paths)
		}
	}()
	go func() {
		defer wg.Done()
		var paths []string
		if paths, ferr = fs.Glob(fsys, "facts/*.tmpl"); ferr == nil {
			facts, ferr = parseFiles(fsys, paths)
		}
	}()
	decls, derr = s.loadDecls()
	wg.Wait()
	if terr != nil {
		return nil, fmt.Errorf("reading templates: %w", terr)
	}
	for _, t := range tmpls {
		tp := strings.TrimSuffix(strings.TrimPrefix(t.src, "files/"), ".tmpl")
		s.Templates[tp] = newFile(tp, t.src, t.tmpl)
	}
	if ferr != nil {
		return nil, ferr
	}
	for _, t := range facts {
		name := strings.TrimSuffix(path.Base(t.src), ".tmpl")
		s.Facts[name] = newFile(name, t.src, t.tmpl)
	}
	dirs, err := fs.Glob(fsys, "v*/series")
	if err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	if s.Revisions, err = s.loadRevisions(dirs, decls); err != nil {
		return nil, err
	}
	sort.Slice(s.Revisions, func(i, j int) bool { return s.Revisions[i].Version < s.Revisions[j].Version })
	stacked, err := fs.Glob(fsys, "*-v*/series")
	if err != nil {
		return nil, err
	}
	// A stacked revision reads the main revisions it applies on.
	if s.Stacked, err = s.loadRevisions(stacked, decls); err != nil {
		return nil, err
	}
	sort.Slice(s.Stacked, func(i, j int) bool {
		a, b := s.Stacked[i], s.Stacked[j]
		return a.Series < b.Series || a.Series == b.Series && a.Version < b.Version
	})
	if err := s.lint(decls); err != nil {
		return nil, err
	}
	if s.VerifyRules, err = loadVerifyRules(fsys); err != nil {
		return nil, err
	}
	s.decls = decls
	return s, nil
}

// complete refuses a directory that lacks what every series description
// has: files/ and a revision folder.
func complete(fsys fs.FS) error {
	_, err := fs.Stat(fsys, "files")
	noFiles := errors.Is(err, fs.ErrNotExist)
	revs, _ := fs.Glob(fsys, "v*/series")
	const fix = "not a series description; kpatch spec -o DIR writes a complete one"
	switch {
	case noFiles && len(revs) == 0:
		return fmt.Errorf("no files/ folder and no v*/series file: %s", fix)
	case noFiles:
		return fmt.Errorf("no files/ folder (the templates of the files the series creates): %s", fix)
	case len(revs) == 0:
		return fmt.Errorf("no v*/series file (a revision): %s", fix)
	}
	return nil
}

// tmpMark is in the name of every temporary file package outdir's
// ReplaceFiles writes beside a file it replaces (kpatch trailers).
const tmpMark = ".kpatch-tmp"

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

func parseHeader(sc *bufio.Scanner, src string, line *int, set func(k, v string) error) error {
	for sc.Scan() {
		*line++
		l := sc.Text()
		if l == "" {
			return nil
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return fmt.Errorf("%s:%d: want \"Key: value\", got %q", src, *line, l)
		}
		if err := set(k, strings.TrimSpace(v)); err != nil {
			return fmt.Errorf("%s:%d: %w", src, *line, err)
		}
	}
	return nil
}

// splitList splits a To or Cc value at the commas between addresses, not
// at those inside a quoted display name ("Liang, Kan" <...>), a comment or
// angle brackets.
func splitList(v string) []string {
	var out []string
	quoted, depth, start := false, 0, 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) {
			switch c := v[i]; {
			case c == '\\' && quoted && i+1 < len(v):
				i++
				continue
			case c == '"':
				quoted = !quoted
				continue
			case quoted:
				continue
			case c == '<' || c == '(':
				depth++
				continue
			case c == '>' || c == ')':
				depth--
				continue
			case c != ',' || depth > 0:
				continue
			}
		}
		if a := strings.TrimSpace(v[start:min(i, len(v))]); a != "" {
			out = append(out, a)
		}
		start = i + 1
	}
	return out
}

// declName matches a patch declaration, vN/<id>.patch.
var declName = regexp.MustCompile(`^v(\d+)/([a-z0-9][a-z0-9-]*)\.patch$`)

// notesName matches the notes of a patch in one revision, vN/<id>.notes.
var notesName = regexp.MustCompile(`^([a-z0-9][a-z0-9-]*)\.notes$`)

// decl is a patch declared once, in the folder of the first revision that
// has it: its text is a template guarded by revision.
type decl struct {
	id, src string
	tmpl    *template.Template

	// parsed are the patches its renders parsed to, by rendered text:
	// most revisions render a declaration to the same text.
	mu     sync.Mutex
	parsed map[string]*Patch
}

// loadDecls reads every vN/<id>.patch of the spec; an id declared twice is
// an error.
func (s *Spec) loadDecls() (map[string]*decl, error) {
	files, err := fs.Glob(s.fsys, "v*/*.patch")
	if err != nil {
		return nil, err
	}
	out := map[string]*decl{}
	for _, f := range files {
		m := declName.FindStringSubmatch(f)
		if m == nil {
			return nil, fmt.Errorf("%s: a patch declaration is named vN/<id>.patch, the id in lower case letters, digits and dashes", f)
		}
		if d := out[m[2]]; d != nil {
			return nil, fmt.Errorf("patch %q is declared twice, in %s and %s: declare it once and guard what differs by revision", m[2], d.src, f)
		}
		data, err := fs.ReadFile(s.fsys, f)
		if err != nil {
			return nil, err
		}
		t, err := parseTemplate(f, numberLines(string(data)))
		if err != nil {
			return nil, err
		}
		out[m[2]] = &decl{id: m[2], src: f, tmpl: t}
	}
	return out, nil
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
			q, err := d.render(r.guardVersion())
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
		return nil, fmt.Errorf("no series %q is stacked on the main one: %w", name, ErrNoRevision)
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

// render renders the declaration for revision v and parses the result.
func (d *decl) render(v int) (*Patch, error) {
	text, err := d.execute(v)
	if err != nil {
		return nil, err
	}
	text = trimTrailingMarks(text)
	d.mu.Lock()
	p, ok := d.parsed[text]
	d.mu.Unlock()
	if !ok {
		if p, err = parsePatch(d.src, text); err != nil {
			return nil, err
		}
		p.ID = d.id
		d.mu.Lock()
		if d.parsed == nil {
			d.parsed = map[string]*Patch{}
		}
		d.parsed[text] = p
		d.mu.Unlock()
	}
	// Each revision gets its own copy: loadRevision numbers it and
	// appends the edits of the patches folded into it.
	q := *p
	q.Folded = slices.Clone(p.Folded)
	q.Edits = slices.Clone(p.Edits)
	return &q, nil
}

// execute runs the declaration's template for revision v. Its guards are
// the placeholder functions it was parsed with: no patch is applied while
// a revision's declarations are read.
func (d *decl) execute(v int) (string, error) {
	var buf bytes.Buffer
	if err := d.tmpl.Execute(&buf, RenderData{Version: v}); err != nil {
		return "", fmt.Errorf("rendering %s for v%d: %w", d.src, v, err)
	}
	return buf.String(), nil
}

// lineMark starts every line of a patch declaration before it is rendered,
// so that the rendered text still says which line of the file each line
// comes from.
var lineMark = regexp.MustCompile("\x01(\\d+)\x02")

// trimTrailingMarks removes the marks of control lines at the end of a
// rendered file: what the regular expression (\x01\d+\x02)+$ matches
// (a whole-text regexp scan costs more than the rest of the render).
func trimTrailingMarks(s string) string {
	for {
		t, ok := cutMark(s, false)
		if !ok {
			return s
		}
		s = t
	}
}

// cutMark removes one line mark, \x01 digits \x02, from the start of s
// (front) or from its end, and reports whether there was one.
func cutMark(s string, front bool) (string, bool) {
	var m string
	if front {
		if !strings.HasPrefix(s, "\x01") {
			return s, false
		}
		end := strings.IndexByte(s, '\x02')
		if end < 0 {
			return s, false
		}
		m = s[1:end]
		s = s[end+1:]
	} else {
		if !strings.HasSuffix(s, "\x02") {
			return s, false
		}
		start := strings.LastIndexByte(s, '\x01')
		if start < 0 {
			return s, false
		}
		m = s[start+1 : len(s)-1]
		s = s[:start]
	}
	if m == "" || strings.Trim(m, "0123456789") != "" {
		return s, false
	}
	return s, true
}

func numberLines(src string) string {
	var b strings.Builder
	for i, l := range strings.SplitAfter(src, "\n") {
		if l == "" {
			continue
		}
		fmt.Fprintf(&b, "\x01%d\x02%s", i+1, l)
	}
	return b.String()
}

// unmark strips the line marks of one rendered line and returns the line
// number of the file it comes from (the last mark at its start).
func unmark(l string) (string, int) {
	n := 0
	for strings.HasPrefix(l, "\x01") {
		end := strings.IndexByte(l, '\x02')
		if end < 0 {
			break
		}
		n, _ = strconv.Atoi(l[1:end])
		l = l[end+1:]
	}
	if strings.IndexByte(l, '\x01') >= 0 { // marks inside a line: a guard mid-line
		l = lineMark.ReplaceAllString(l, "")
	}
	return l, n
}

// parsePatch parses a rendered patch declaration: "Author:" and "Subject:"
// lines, a blank line, the commit message, then optionally "=== edits" and
// the edits.
func parsePatch(src, text string) (*Patch, error) {
	p := &Patch{Src: src}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	i := 0
	next := func() (string, int, bool) {
		for i < len(lines) {
			l, n := unmark(lines[i])
			i++
			return l, n, true
		}
		return "", 0, false
	}
	for {
		l, n, ok := next()
		if !ok {
			break
		}
		if l == "" {
			break
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want \"Key: value\", got %q", src, n, l)
		}
		switch v = strings.TrimSpace(v); k {
		case "Author":
			p.Author = v
		case "Subject":
			p.Subject = v
		default:
			return nil, fmt.Errorf("%s:%d: unknown field %q", src, n, k)
		}
	}
	if p.Author == "" || p.Subject == "" {
		return nil, fmt.Errorf("%s: Author and Subject are required", src)
	}
	var log strings.Builder
	inEdits := false
	var e *Edit
	for {
		l, line, ok := next()
		if !ok {
			break
		}
		switch {
		case strings.HasPrefix(l, "==="):
			if l != "=== edits" || inEdits {
				return nil, fmt.Errorf("%s:%d: unknown section line %q: the edits start at a line \"=== edits\", once", src, line, l)
			}
			inEdits = true
		case inEdits:
			switch {
			case strings.HasPrefix(l, "@ "):
				ed, err := parseEditLine(l[2:])
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %w", src, line, err)
				}
				ed.Src = fmt.Sprintf("%s:%d", src, line)
				p.Edits = append(p.Edits, ed)
				e = &p.Edits[len(p.Edits)-1]
			case strings.HasPrefix(l, "+"):
				if e == nil {
					return nil, fmt.Errorf("%s:%d: text before the first \"@ PATH: OP\" line", src, line)
				}
				e.Text += l[1:] + "\n"
			case l == "" || strings.HasPrefix(l, "#"):
			default:
				return nil, fmt.Errorf("%s:%d: an edit line starts with \"@ \" or \"+\", got %q", src, line, l)
			}
		case l == "---":
			return nil, fmt.Errorf("%s:%d: the notes below \"---\" belong to one revision: write them in vN/<id>.notes", src, line)
		default:
			log.WriteString(l + "\n")
		}
	}
	p.Log = log.String()
	if strings.TrimSpace(p.Log) == "" {
		return nil, fmt.Errorf("%s: empty commit message", src)
	}
	return p, nil
}

// parseEditLine parses "PATH: OP ARG..." where arguments are separated by
// spaces and may be double-quoted.
func parseEditLine(s string) (Edit, error) {
	p, rest, ok := strings.Cut(s, ": ")
	if !ok || p == "" {
		return Edit{}, fmt.Errorf("want \"@ PATH: OP ARGS\", got %q", "@ "+s)
	}
	var words []string
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] == '"' {
			w, n, err := unquotePrefix(rest)
			if err != nil {
				return Edit{}, err
			}
			words = append(words, w)
			rest = rest[n:]
			continue
		}
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			i = len(rest)
		}
		words = append(words, rest[:i])
		rest = rest[i:]
	}
	if len(words) == 0 {
		return Edit{}, fmt.Errorf("no operation after %q", p+":")
	}
	return Edit{Path: p, Op: words[0], Args: words[1:]}, nil
}

func unquotePrefix(s string) (string, int, error) {
	for i := 1; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == '"' {
			w, err := strconv.Unquote(s[:i+1])
			return w, i + 1, err
		}
	}
	return "", 0, fmt.Errorf("unterminated quote in %q", s)
}

// controlWords are the actions that a line may hold alone.
var controlWords = []string{"if", "else", "end", "range", "with", "define", "block", "created"}

// isControlLine reports whether l (ending in a newline) holds nothing but
// one control action ({{if}}, {{else}}, {{end}}, {{created}}, a comment, ...).
func isControlLine(l string) bool {
	if !strings.HasPrefix(l, "{{") || !strings.HasSuffix(l, "}}\n") {
		return false
	}
	in := strings.TrimPrefix(l[2:], "-")
	in = strings.TrimLeft(in, " \t")
	if strings.HasPrefix(in, "/*") {
		return true
	}
	for _, w := range controlWords {
		if rest, ok := strings.CutPrefix(in, w); ok {
			if rest == "" || !isWordByte(rest[0]) {
				return true
			}
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// trimLeadingMarks removes the line marks of numberLines at the start of a
// line: what ^(\x01\d+\x02)+ matches.
func trimLeadingMarks(l string) string {
	for {
		t, ok := cutMark(l, true)
		if !ok {
			return l
		}
		l = t
	}
}

// parseTemplate parses a template of the spec (a created file, a fact or a
// patch declaration) with text/template and the spec's functions, after
// joinControlLines.
func parseTemplate(name, src string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(placeholderFuncs).Parse(joinControlLines(src))
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	return t, nil
}

// joinControlLines removes the newline after every line that holds only a
// control action ({{if}}, {{else}}, {{end}}, {{created}}, a comment, ...),
// so such lines leave nothing in the output, while whitespace around the
// code lines (tabs, blank lines) is kept exactly as written.
func joinControlLines(src string) string {
	var b strings.Builder
	b.Grow(len(src) + len(src)/8) // room for the comments, without regrowing
	for rest := src; rest != ""; {
		l := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			l = rest[:i+1]
		}
		rest = rest[len(l):]
		bare := l
		if strings.HasPrefix(bare, "\x01") {
			bare = trimLeadingMarks(bare)
		}
		if isControlLine(bare) && strings.Count(l, "{{") == 1 {
			// The newline goes into a comment: it leaves nothing in the
			// output, and the template's line numbers stay those of the file.
			l = strings.TrimSuffix(l, "\n") + "{{/*\n*/}}"
		}
		b.WriteString(l)
	}
	return b.String()
}
