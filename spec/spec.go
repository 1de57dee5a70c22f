package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"
	"time"
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
	// MessageIDs are the Message-Ids of the revision's messages as
	// posted, the cover letter's first (Message-Ids; see PostedID); nil
	// when its posting is not recorded.
	MessageIDs []string
	ChangeID   string
	To, Cc     []string
	Cover      string   // the cover letter text
	Patches    []*Patch // in order; a fold is one patch
	Dir        string   // its folder in the spec, "v12"
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
	Number  int
	ID      string   // the id of the patch declaration
	Folded  []string // ids of the patches folded into this one, in order
	Author  string
	Subject string
	// Date is the author date the declaration gives (a "Date:" line, as
	// a commit records it); zero when it gives none, and the patch is
	// dated after the revision's cover letter.
	Date      time.Time
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
