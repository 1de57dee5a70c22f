// Package series generates a patch series from a series description (package
// spec) against a kernel tree (package kernelsrc), and writes it as mail the
// way git format-patch --cover-letter --thread -v N does.
//
// Generation renders the created files after every patch and places the
// edits to existing files with package hooks; patch N is the difference
// between the states before and after step N, diffed with package linediff.
package series

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"kpatch/plumbing/diffstat"
	"kpatch/plumbing/kernelsrc"
	"kpatch/plumbing/linediff"
	"kpatch/plumbing/mail"
	"kpatch/plumbing/maintainers"
	"kpatch/series/hooks"
	"kpatch/spec"
)

// ErrAlreadyApplied is returned when the tree already has the series.
var ErrAlreadyApplied = errors.New("the tree already has the series")

// Series is a generated series: the revision, the tree it was generated
// on, and its patches with every file's content before and after each.
// What the mail adds (diffs, recipients, commits, patch ids) is computed
// when first asked for (Messages, Commit, PatchID), so a stage that only
// builds or boots the files pays for none of it. Safe for concurrent use.
type Series struct {
	Revision *spec.Revision
	Tree     *kernelsrc.Tree
	// Patches are every patch applied to the tree, in order: for a
	// stacked series its prerequisite's first (Revision.Own of them),
	// numbered with its own as one series, as test and verify build and
	// check it; Own gives the series as posted.
	Patches []*Patch
	// final is every touched file's content after the last patch (nil:
	// absent).
	final map[string][]byte
	// prerequisites are, in a series Own returned, the patches of the
	// prerequisite revision, whose commits are the parents of the first
	// own one and whose patch ids the cover letter lists.
	prerequisites []*Patch
	// extraTo and extraCc are added to every message (AddRecipients).
	extraTo, extraCc []string
	// who is what says why each message goes to each recipient (who.go).
	who whoState
	// mailOnce computes what only the mail needs: the commits and the
	// recipients.
	mailOnce sync.Once
	mailErr  error
	To, Cc   []string // recipients of the cover letter, once mailOnce has run
	tipTree  string
}

// Patch is one generated patch.
type Patch struct {
	*spec.Patch
	Date  time.Time
	Files []*FileChange // in git's path order
	// InBase is set for a patch that changes nothing because the base
	// has it already: a fix that stable trees carry, every edit of it
	// a stable one (hooks.Stable). Its mail is git format-patch
	// --always's for an empty commit; git am records it with
	// --empty=keep.
	InBase bool
	To, Cc []string // its recipients, once the series' mail is made
	// roles are the recipients MAINTAINERS gives, with their roles (who.go).
	roles  []maintainers.Recipient
	commit string
	idOnce sync.Once
	id     string
}

// FileChange is the change of one file by one patch.
type FileChange struct {
	Path     string
	Old, New []byte // Old nil for a created file
	Created  bool
	// prev is the change of the same file by an earlier patch, whose New
	// is this one's Old; nil when Old is the base's.
	prev     *FileChange
	baseID   kernelsrc.Hash // the base's blob id of Old, when prev is nil and the tree knows it
	haveBase bool

	idOnce sync.Once
	newID  kernelsrc.Hash
	once   sync.Once
	diff   string        // the git diff, from "diff --git" on
	stat   diffstat.File // its diffstat entry
}

// oldID returns the blob id of the file before the change.
func (f *FileChange) oldID() kernelsrc.Hash {
	switch {
	case f.prev != nil:
		return f.prev.id()
	case f.haveBase:
		return f.baseID
	}
	return kernelsrc.HashObject(kernelsrc.BlobObject, f.Old)
}

// id returns the blob id of the file after the change.
func (f *FileChange) id() kernelsrc.Hash {
	f.idOnce.Do(func() { f.newID = kernelsrc.HashObject(kernelsrc.BlobObject, f.New) })
	return f.newID
}

// state is the tree as the series is applied, loading files lazily.
type state struct {
	tree  *kernelsrc.Tree
	files map[string][]byte // nil value: known absent
	base  map[string][]byte // the files as the tree has them
}

func (s *state) Get(path string) ([]byte, error) {
	if c, ok := s.files[path]; ok {
		if c == nil {
			return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
		}
		return c, nil
	}
	c, err := s.tree.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s.files[path] = c
	s.base[path] = c
	return c, nil
}

func (s *state) Set(path string, c []byte) { s.files[path] = c }

// BaseLine implements hooks.BaseLines: it maps a line (1-based) of a
// file's current content to the tree's through git's edit script
// (package linediff). Only error messages ask, so nothing is kept. A line
// the series added has no base line.
func (s *state) BaseLine(path string, line int) (int, bool) {
	base, ok := s.base[path]
	if !ok {
		return 0, false
	}
	cur := s.files[path]
	if bytes.Equal(base, cur) {
		return line, true
	}
	shift := 0 // base line minus current line before the next change
	for _, c := range linediff.Changes(base, cur) {
		if line <= c.NewStart {
			break
		}
		if line <= c.NewStart+c.NewLines {
			return 0, false
		}
		shift = (c.OldStart + c.OldLines) - (c.NewStart + c.NewLines)
	}
	return line + shift, true
}

// Generate renders the selected revision against the selection's tree,
// which must be open (Selection.OpenTree). A stacked series comes with its
// prerequisite's patches (see Series.Patches and Own).
func Generate(ctx context.Context, sel *Selection) (*Series, error) {
	if sel.Tree == nil {
		return nil, errors.New("no kernel tree to generate the series on: give --tree")
	}
	return generate(ctx, sel.Revision, sel.Tree)
}

// generate builds rev on tree.
func generate(ctx context.Context, rev *spec.Revision, tree *kernelsrc.Tree) (*Series, error) {
	s, err := Build(ctx, rev, tree)
	if derr := tree.Err(); derr != nil {
		return nil, derr // damage is the cause of whatever Build saw
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Own returns the series as it is posted: for a series stacked on a
// prerequisite revision its own patches, numbered from 1 and dated from
// its cover letter, after the prerequisite's (their commits stay the
// parents of the first own commit, and the cover letter lists their patch
// ids); the series itself for the main one.
func (s *Series) Own() *Series {
	own := s.Revision.Own
	if own == 0 {
		return s
	}
	o := &Series{Revision: s.Revision, Tree: s.Tree, final: s.final, extraTo: s.extraTo, extraCc: s.extraCc, who: s.who}
	for _, p := range s.Patches[:own] {
		o.prerequisites = append(o.prerequisites, &Patch{Patch: p.Patch, Date: p.Date, Files: p.Files, InBase: p.InBase})
	}
	for _, p := range s.Patches[own:] {
		sp := *p.Patch
		sp.Number -= own
		d := s.Revision.Date.Add(time.Duration(sp.Number) * time.Second)
		if !sp.Date.IsZero() {
			d = sp.Date // as committed
		}
		o.Patches = append(o.Patches, &Patch{Patch: &sp, Date: d, Files: p.Files, InBase: p.InBase})
	}
	return o
}

// BaseFiles lists the files of a kernel tree that Generate reads for any
// revision of sp (what each revision's edits change, and MAINTAINERS), then
// the top-level Kconfig, which kernelsrc also requires of a plain directory
// to take it for a kernel tree. Copied from a real tree into a plain
// directory, these files make a base every revision generates on: the
// synthetic bases the tests build (edited copies, shifted lines) start from
// this list, the one list of those files.
func BaseFiles(sp *spec.Spec) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, rev := range sp.Revisions {
		for _, p := range filesRead(rev) {
			add(p)
		}
	}
	add("Kconfig")
	return out
}

// filesRead lists the files of the base that Build reads, in the order it
// first reads them: the files the edits change, then MAINTAINERS.
func filesRead(rev *spec.Revision) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, sp := range rev.Patches {
		for _, e := range sp.Edits {
			add(e.Path)
			if e.Op == "move-function" && len(e.Args) > 1 {
				add(e.Args[1])
			}
		}
	}
	add("MAINTAINERS")
	return out
}

// AddRecipients adds addresses to every message (the cover letter and each
// patch), skipping ones already there; an address in To leaves Cc. Call it
// before the mail is made (Messages).
func (s *Series) AddRecipients(to, cc []string) {
	s.extraTo = append(s.extraTo, to...)
	s.extraCc = append(s.extraCc, cc...)
}

// Build applies rev step by step to tree. When edits cannot be placed, it
// goes on with the others and returns them all in an *UnplacedError.
func Build(ctx context.Context, rev *spec.Revision, tree *kernelsrc.Tree) (*Series, error) {
	created := rev.Spec().CreatedFiles()
	rendering := renderCreated(rev, created) // beside the checks and the edits
	defer rendering.stop()
	if err := checkCreated(tree, created); err != nil {
		return nil, err
	}
	if err := checkRecipients(rev); err != nil {
		return nil, err
	}
	s := &Series{Revision: rev, Tree: tree}
	st := &state{tree: tree, files: map[string][]byte{}, base: map[string][]byte{}}
	for _, p := range created {
		st.files[p] = nil
	}
	ed := hooks.NewEditor(st)        // keeps the edited files split in lines
	last := map[string]*FileChange{} // the latest change of each file
	var unplaced []*Unplaced
	for i, sp := range rev.Patches {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		before := map[string][]byte{}
		snapshot := func(path string) {
			if _, ok := before[path]; !ok {
				c, _ := st.Get(path)
				before[path] = c
			}
		}
		for _, e := range sp.Edits {
			snapshot(e.Path)
			if e.Op == "move-function" {
				snapshot(e.Args[1])
			}
			if err := ed.Apply(e); err != nil {
				var ae *hooks.AnchorError
				if !errors.As(err, &ae) {
					return nil, fmt.Errorf("patch %d (%s): %w [%s]", sp.Number, sp.ID, err, e.Src)
				}
				// Go on with the next edit, as a compiler goes on
				// after an error, to report every edit at once.
				u := &Unplaced{Patch: sp.Number, PatchID: sp.ID, AnchorError: ae}
				for _, v := range unplaced {
					if errors.Is(ae, hooks.ErrAnchorMissing) && (v.File == e.Path || v.Edit.Op == "move-function") && hooks.Adds(v.Edit.Text, e) {
						u.After = v.Src
						u.Candidates = nil
						break
					}
				}
				u.Edit = e
				unplaced = append(unplaced, u)
			}
		}
		for j, path := range created {
			c, exists, err := rendering.get(i, j)
			if err != nil {
				return nil, fmt.Errorf("patch %d (%s): %w", sp.Number, sp.ID, err)
			}
			if !exists {
				continue
			}
			snapshot(path)
			st.files[path] = c
		}
		p := &Patch{Patch: sp, Date: rev.Date.Add(time.Duration(sp.Number) * time.Second)}
		if !sp.Date.IsZero() {
			p.Date = sp.Date // as committed
		}
		paths := make([]string, 0, len(before))
		for path := range before {
			paths = append(paths, path)
		}
		sort.Strings(paths) // git orders a diff by path
		for _, path := range paths {
			old, cur := before[path], st.files[path]
			if bytes.Equal(old, cur) && old != nil {
				continue
			}
			f := &FileChange{Path: path, Old: old, New: cur, Created: old == nil, prev: last[path]}
			if f.prev == nil && !f.Created {
				f.baseID, f.haveBase = tree.BlobHash(path)
			}
			last[path] = f
			p.Files = append(p.Files, f)
		}
		if len(unplaced) > 0 {
			continue // nothing is written: only the other edits still count
		}
		if len(p.Files) == 0 {
			if !inBase(sp) {
				return nil, fmt.Errorf("patch %d (%s) changes nothing: check its edits and the templates' guards", sp.Number, sp.ID)
			}
			p.InBase = true
		}
		s.Patches = append(s.Patches, p)
	}
	if len(unplaced) > 0 {
		return nil, &UnplacedError{Base: tree.Base, Edits: unplaced}
	}
	s.final = st.files
	return s, nil
}

// renders are the created files after each patch, rendered by one
// goroutine while Build places the edits: they depend on the spec alone,
// and on two cores the rendering (text/template running the guards of
// every created file after every patch) and the edits, which inflate the
// base's files, take about as long each.
type renders struct {
	out   [][]rendered    // out[i][j]: created[j] after patch i
	ready []chan struct{} // ready[i] is closed once out[i] is set
	quit  chan struct{}
}

type rendered struct {
	content []byte
	exists  bool
	err     error
}

// renderCreated starts rendering every created file after every patch of
// rev, in a goroutine beside the placing of the edits: together with the
// recipients made beside the commits (prepareMail) it took gen of the x86
// series from 85.2 to 64.2 ms wall against git format-patch's 61.8 ms
// (docs/benchmarks.md), what keeps gen at git's speed.
func renderCreated(rev *spec.Revision, created []string) *renders {
	r := &renders{out: make([][]rendered, len(rev.Patches)), ready: make([]chan struct{}, len(rev.Patches)), quit: make(chan struct{})}
	for i := range r.ready {
		r.ready[i] = make(chan struct{})
	}
	go func() {
		for i, sp := range rev.Patches {
			out := make([]rendered, len(created))
			for j, path := range created {
				out[j].content, out[j].exists, out[j].err = rev.Render(path, sp.Number)
			}
			r.out[i] = out
			close(r.ready[i])
			select {
			case <-r.quit:
				return
			default:
			}
		}
	}()
	return r
}

// get returns created[j] after patch i, as rev.Render does.
func (r *renders) get(i, j int) ([]byte, bool, error) {
	<-r.ready[i]
	o := r.out[i][j]
	return o.content, o.exists, o.err
}

// stop ends the rendering when Build returns.
func (r *renders) stop() { close(r.quit) }

// checkCreated refuses a base that already has one of the files the series
// creates.
func checkCreated(tree *kernelsrc.Tree, created []string) error {
	for _, p := range created {
		if tree.Exists(p) && tree.IsGit() {
			return fmt.Errorf("%s already exists at %s: %w (Linux 6.17 and later include it); choose an older --base", p, tree.Base, ErrAlreadyApplied)
		}
		if tree.Exists(p) {
			return fmt.Errorf("%s already exists in %s: %w (Linux 6.17 and later include it); give the directory of an older kernel with --tree, or remove %s there if it is left from an earlier try", p, tree.Dir, ErrAlreadyApplied, p)
		}
	}
	return nil
}

// checkRecipients refuses a revision whose To or Cc holds something that
// is not a mail address.
func checkRecipients(rev *spec.Revision) error {
	for _, f := range []struct {
		field string
		list  []string
	}{{"To", rev.To}, {"Cc", rev.Cc}} {
		for _, a := range f.list {
			if _, _, err := mail.ParseAddress(a); err != nil {
				return fmt.Errorf("series description v%d, %s: %w", rev.Version, f.field, err)
			}
		}
	}
	return nil
}

// prepareMail computes, once, what the mail needs: every patch's commit,
// the diffs (the prerequisites' too, for their patch ids) and the
// recipients. The recipients (MAINTAINERS parsed and matched) are made
// beside the commits and the diffs, which need the same time again and
// nothing of them: with renderCreated, 85.2 -> 64.2 ms for the x86
// series (docs/benchmarks.md).
func (s *Series) prepareMail() error {
	s.mailOnce.Do(func() {
		rec := make(chan error, 1)
		go func() { rec <- s.recipients() }()
		err := s.commits()
		for _, p := range append(append([]*Patch{}, s.prerequisites...), s.Patches...) {
			for _, f := range p.Files {
				s.Diff(f)
			}
		}
		if rerr := <-rec; err == nil {
			err = rerr
		}
		s.mailErr = err
	})
	return s.mailErr
}

// recipients fills To and Cc from MAINTAINERS as it stands after the
// series (so that sections the series adds count), from the revision and
// from AddRecipients: each patch's from the files it changes; the cover
// letter's from all of them, or for a stacked series as posted (Own) from
// its own patches' recipients.
func (s *Series) recipients() error {
	mf, err := s.maintainers()
	if err != nil {
		return err
	}
	// Match each path once; patches share paths.
	sections := map[string][]*maintainers.Section{}
	var all [][]*maintainers.Section
	var allPaths []string
	for _, p := range s.Patches {
		var secs [][]*maintainers.Section
		var paths []string
		for _, f := range p.Files {
			if _, ok := sections[f.Path]; !ok {
				sections[f.Path] = mf.Sections(f.Path)
			}
			secs = append(secs, sections[f.Path])
			paths = append(paths, f.Path)
		}
		all = append(all, secs...)
		allPaths = append(allPaths, paths...)
		to, cc := s.maintainersOf(mf, paths, secs, &p.roles)
		p.To = merge(to, s.Revision.To)
		p.Cc = merge(cc, s.Revision.Cc)
		p.Cc = minus(p.Cc, p.To)
	}
	if s.prerequisites != nil {
		s.To, s.Cc = nil, nil
		s.who.coverRoles = nil // its patches' (Who)
		for _, p := range s.Patches {
			s.To = merge(s.To, p.To)
			s.Cc = merge(s.Cc, p.Cc)
		}
		s.Cc = minus(s.Cc, s.To)
	} else {
		to, cc := s.maintainersOf(mf, allPaths, all, &s.who.coverRoles)
		s.To = merge(to, s.Revision.To)
		s.Cc = minus(merge(cc, s.Revision.Cc), s.To)
	}
	if len(s.extraTo)+len(s.extraCc) > 0 {
		add := func(pto, pcc *[]string) {
			*pto = merge(*pto, s.extraTo)
			*pcc = minus(merge(*pcc, s.extraCc), *pto)
		}
		add(&s.To, &s.Cc)
		for _, p := range s.Patches {
			add(&p.To, &p.Cc)
		}
	}
	return nil
}

// maintainers parses MAINTAINERS as the series leaves it, with the tree's
// .mailmap; a tree without it is an error.
func (s *Series) maintainers() (*maintainers.File, error) {
	m, ok := s.final["MAINTAINERS"]
	if !ok {
		var err error
		if m, err = s.Tree.ReadFile("MAINTAINERS"); err != nil {
			return nil, err
		}
	}
	mf, err := maintainers.ParseLazy(m) // only the sections the paths may match are parsed
	if err != nil {
		return nil, fmt.Errorf("MAINTAINERS of %s: %w", s.Tree.Base, err)
	}
	mf.IsDir = s.Tree.IsDir
	mf.ReadFile = s.Tree.ReadFile // get_maintainer.pl takes the addresses in .yaml files
	if mm, err := s.Tree.ReadFile(".mailmap"); err == nil {
		mf.Mailmap = maintainers.ParseMailmapLazy(mm) // only the lines of the addresses mapped are parsed
	}
	return mf, nil
}

// merge returns the addresses of a followed by those of b that a does not
// have, every one written as RFC 5322 wants it (mail.NormalizeAddress).
func merge(a, b []string) []string {
	var out []string
	for _, x := range append(append([]string{}, a...), b...) {
		if x = mail.NormalizeAddress(x); !contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func contains(list []string, x string) bool {
	ax := addrOf(x)
	for _, y := range list {
		if addrOf(y) == ax {
			return true
		}
	}
	return false
}

// addrOf returns the address of a recipient without its display name, in
// lower case: two recipients with the same address are one, whatever
// their names.
func addrOf(s string) string {
	if _, addr, err := mail.ParseAddress(s); err == nil {
		return strings.ToLower(addr)
	}
	return strings.ToLower(strings.TrimSpace(s))
}

// FinalFiles returns the content after the last patch of every file the
// series touches.
func (s *Series) FinalFiles() map[string][]byte {
	out := map[string][]byte{}
	for _, p := range s.Patches {
		for _, f := range p.Files {
			out[f.Path] = s.final[f.Path]
		}
	}
	return out
}

// PatchesTouching returns the numbers of the patches that change path.
func (s *Series) PatchesTouching(path string) []int {
	var out []int
	for _, p := range s.Patches {
		for _, f := range p.Files {
			if f.Path == path {
				out = append(out, p.Number)
				break
			}
		}
	}
	return out
}
