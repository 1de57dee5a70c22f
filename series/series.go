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
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"kpatch/plumbing/diffstat"
	"kpatch/plumbing/kernelsrc"
	"kpatch/plumbing/linediff"
	"kpatch/plumbing/mail"
	"kpatch/plumbing/maintainers"
	"kpatch/plumbing/outdir"
	"kpatch/series/hooks"
	"kpatch/spec"
	"kpatch/templates/linux"
)

// ErrAlreadyApplied is returned when the tree already has the series.
var ErrAlreadyApplied = errors.New("the tree already has the series")

// Options selects what Generate works on.
type Options struct {
	Tree    string // kernel tree: a git repository or a plain directory
	Base    string // revision of the tree; "" means the revision's recorded base
	Version int    // revision of the series; 0 means the newest
	// Stack names a series stacked on a revision of the main one (the
	// spec's NAME-vN folders, "x86"): Version is then its revision, the
	// prerequisite revision's patches are applied first and the series
	// holds the stacked one's own patches only.
	Stack string
	// On lays the stacked series on this revision of the main one instead
	// of the one it was posted on (0: that one); see spec.Revision.On.
	On int
	// WithPrerequisite keeps a stacked series' prerequisite in it: the
	// series is then the prerequisite's patches followed by the stacked
	// one's, numbered as one series, as kpatch test and verify build,
	// boot and check it (a stacked series does not build alone).
	WithPrerequisite bool
	SpecDir          string   // series description directory; "" means the embedded one
	Plain            bool     // read Tree as a plain directory even if it is a git repository
	To, Cc           []string // more recipients for every message, as git format-patch --to/--cc
}

// Series is a generated series.
type Series struct {
	Revision *spec.Revision
	Tree     *kernelsrc.Tree
	Patches  []*Patch
	To, Cc   []string // recipients of the whole series (cover letter)
	// state after each step: files[step][path]; absent = not in the tree.
	final   map[string][]byte
	tipTree string
	// prerequisites are, for a series stacked on a prerequisite revision,
	// the patches of that revision, in order (see ownPatches).
	prerequisites []*Patch
	total         []diffstat.File // see TotalStat
	totalDone     bool
	totalMu       sync.Mutex
}

// Patch is one generated patch.
type Patch struct {
	*spec.Patch
	Date   time.Time
	Files  []*FileChange // in git's path order
	To, Cc []string
	Commit string // the commit's hash (what --branch records)
	id     string // its patch id, once made (see patchID)
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
	idOnce   sync.Once
	newID    kernelsrc.Hash

	diff string        // the git diff, from "diff --git" on
	stat diffstat.File // its diffstat entry
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

// LoadSpec loads the embedded series description, or the one in dir.
func LoadSpec(dir string) (*spec.Spec, error) {
	if dir == "" {
		return spec.Load(linux.FS)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--spec %s: %w", dir, outdir.ErrNotDir)
	}
	return spec.Load(os.DirFS(dir))
}

// Generate renders the series against the tree.
func Generate(ctx context.Context, opt Options) (*Series, error) {
	if opt.Tree == "" {
		opt.Tree = "."
	}
	sp, err := LoadSpec(opt.SpecDir)
	if err != nil {
		return nil, err
	}
	rev, err := sp.Select(opt.Version, opt.Stack, opt.On)
	if err != nil {
		return nil, err
	}
	base := opt.Base
	if base == "" {
		base = rev.Base
	}
	tree, err := kernelsrc.Open(opt.Tree, base, opt.Plain)
	if err != nil {
		return nil, err
	}
	s, err := generate(ctx, rev, tree, !opt.WithPrerequisite)
	if err != nil {
		return nil, err
	}
	s.AddRecipients(opt.To, opt.Cc)
	return s, nil
}

// GenerateRevision renders revision v of s's spec against the tree and
// base s was rendered on, without opening the tree again: the earlier
// revision kpatch gen --interdiff and --range-diff compare s with. It adds
// no recipients (those diffs do not show them).
func (s *Series) GenerateRevision(ctx context.Context, v int) (*Series, error) {
	rev, err := s.Revision.Spec().Revision(v)
	if err != nil {
		return nil, err
	}
	return generate(ctx, rev, s.Tree, true)
}

// generate builds rev on tree; own keeps only a stacked series' own
// patches.
func generate(ctx context.Context, rev *spec.Revision, tree *kernelsrc.Tree, own bool) (*Series, error) {
	s, err := build(ctx, rev, tree, own)
	if derr := tree.Err(); derr != nil {
		return nil, derr // damage is the cause of whatever Build saw
	}
	if err != nil {
		return nil, err
	}
	if own {
		s.ownPatches()
		// The own patches are dated anew: their commits, which the
		// mail's "From <sha>" lines and --branch give, with them.
		if err := s.commits(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ownPatches keeps, for a series stacked on a prerequisite revision, its
// own patches, numbered from 1 and dated from its cover letter: the
// prerequisite's were applied to reach the state they apply to (their
// commits stay the parents of the first own commit). The cover letter's
// recipients become those of the own patches.
func (s *Series) ownPatches() {
	own := s.Revision.Own
	if own == 0 {
		return
	}
	s.prerequisites = s.Patches[:own]
	s.Patches = s.Patches[own:]
	s.To, s.Cc = nil, nil
	for _, p := range s.Patches {
		sp := *p.Patch
		sp.Number -= own
		p.Patch = &sp
		p.Date = s.Revision.Date.Add(time.Duration(sp.Number) * time.Second)
		s.To = merge(s.To, p.To)
		s.Cc = merge(s.Cc, p.Cc)
	}
	s.Cc = minus(s.Cc, s.To)
	s.totalDone = false // TotalStat counts the own patches only
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
// patch), skipping ones already there; an address in To leaves Cc.
func (s *Series) AddRecipients(to, cc []string) {
	add := func(pto, pcc *[]string) {
		*pto = merge(*pto, to)
		*pcc = minus(merge(*pcc, cc), *pto)
	}
	add(&s.To, &s.Cc)
	for _, p := range s.Patches {
		add(&p.To, &p.Cc)
	}
}

// Build applies rev step by step to tree. When edits cannot be placed, it
// goes on with the others and returns them all in an *UnplacedError.
func Build(ctx context.Context, rev *spec.Revision, tree *kernelsrc.Tree) (*Series, error) {
	return build(ctx, rev, tree, false)
}

// build is Build; own says that only a stacked series' own patches will be
// kept (ownPatches), so the prerequisite's recipients are not looked up.
func build(ctx context.Context, rev *spec.Revision, tree *kernelsrc.Tree, own bool) (*Series, error) {
	created := rev.Spec().CreatedFiles()
	if err := checkCreated(tree, created); err != nil {
		return nil, err
	}
	return place(ctx, rev, tree, own, created)
}

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

// place is build after the check of the created files.
func place(ctx context.Context, rev *spec.Revision, tree *kernelsrc.Tree, own bool, created []string) (*Series, error) {
	s := &Series{Revision: rev, Tree: tree}
	st := &state{tree: tree, files: map[string][]byte{}, base: map[string][]byte{}}
	last := map[string]*FileChange{} // the latest change of each file
	for _, p := range created {
		st.files[p] = nil
	}
	ed := hooks.NewEditor(st) // keeps the edited files split in lines
	var unplaced []*Unplaced
	for _, sp := range rev.Patches {
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
		for _, path := range created {
			c, exists, err := rev.Render(path, sp.Number)
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
			return nil, fmt.Errorf("patch %d (%s) changes nothing: check its edits and the templates' guards", sp.Number, sp.ID)
		}
		for _, f := range p.Files {
			f.diff, f.stat = s.Diff(f)
		}
		s.Patches = append(s.Patches, p)
		// A stacked series lists its prerequisite's patch ids.
		if own && len(s.Patches) <= rev.Own {
			p.id = s.computePatchID(p)
		}
	}
	if len(unplaced) > 0 {
		return nil, &UnplacedError{Base: tree.Base, Edits: unplaced}
	}
	s.final = st.files
	mf, err := s.parseMaintainers(st)
	if err != nil {
		return nil, err
	}
	skip := 0 // patches whose recipients nobody reads
	if own {
		skip = min(rev.Own, len(s.Patches))
	}
	if err := s.recipients(mf, skip); err != nil {
		return nil, err
	}
	if err := s.commits(); err != nil {
		return nil, err
	}
	return s, nil
}

// recipients fills To and Cc from MAINTAINERS as it stands after the series
// (so that sections the series adds count) and from the revision, for the
// patches after the first skip (a stacked series' prerequisite, which
// ownPatches drops; the series' own To and Cc are then those of the
// patches it keeps, as ownPatches sets them).
func (s *Series) recipients(mf *maintainers.File, skip int) error {
	for _, f := range []struct {
		field string
		list  []string
	}{{"To", s.Revision.To}, {"Cc", s.Revision.Cc}} {
		field := f.field
		for _, a := range f.list {
			if _, _, err := mail.ParseAddress(a); err != nil {
				return fmt.Errorf("series description v%d, %s: %w", s.Revision.Version, field, err)
			}
		}
	}
	// Match each path once; patches share paths.
	sections := map[string][]*maintainers.Section{}
	var all [][]*maintainers.Section
	var allPaths []string
	for _, p := range s.Patches[skip:] {
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
		to, cc := mf.RecipientsOfPaths(paths, secs)
		p.To = merge(to, s.Revision.To)
		p.Cc = merge(cc, s.Revision.Cc)
		p.Cc = minus(p.Cc, p.To)
	}
	to, cc := mf.RecipientsOfPaths(allPaths, all)
	s.To = merge(to, s.Revision.To)
	s.Cc = minus(merge(cc, s.Revision.Cc), s.To)
	return nil
}

// parseMaintainers parses MAINTAINERS as st has it now, with the tree's
// .mailmap; a tree without it is an error.
func (s *Series) parseMaintainers(st *state) (*maintainers.File, error) {
	m, err := st.Get("MAINTAINERS")
	if err != nil {
		return nil, err
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
