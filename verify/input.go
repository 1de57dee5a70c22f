package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/plumbing/gitapply"
	"kpatch/plumbing/kernelsrc"
	"kpatch/plumbing/mail"
	"kpatch/series"
)

// Series is a patch series as verify sees it: the messages and, where
// known, the content of every file it touches after every patch.
type Series struct {
	Source  string                    // what was read: "v11 generated on v6.12", a file
	Sender  string                    // who posts the series ("Name <addr>" or a name)
	Patches []*Patch                  // in order
	Tree    *kernelsrc.Tree           // the base tree, nil when none was given
	created map[string]bool           // the files the series creates
	changes map[string][]int          // path -> the patches that change it, in order
	cRead   atomic.Pointer[cReadInfo] // how the last Run read the C files
	// unreadable are the mails of the series git am would stop at (see
	// mail.LoadAll): left out, each a PATCH_APPLY error.
	unreadable []mail.Unreadable
	// total is the number of patches the series has as posted (M of
	// "N/M"), 0 when it is what verify read.
	total int
}

// Patch is one patch of a series.
type Patch struct {
	// Number is the patch's place among the patches verify read (an
	// unreadable mail left out); findings and FileAt count by it.
	Number int
	// Posted is its place in the series as posted: N of the subject's
	// "N/M", or its place among the files read, unreadable ones counted.
	Posted    int
	Subject   string // without the "[PATCH ...]" prefix
	Author    string // "Name <addr>"
	Log       string // the commit message with its trailers
	Changelog string // the notes between "---" and the diffstat
	Files     []*File
	diffs     []*gitdiff.File // Files as go-gitdiff parsed them
	mail      *mail.Patch     // the patch as package mail read it
	Mail      string          // the whole message, as posted or generated
	MailFile  string          // the file it was read from (or would be written to)
	MailLine  int             // the line of MailFile on which Mail starts
	// SubjectLine is the line of MailFile with the subject.
	SubjectLine int
	// refused is what git apply refuses of the patch (PATCH_APPLY), and
	// alreadyApplied says, when the patch does not apply, that the tree
	// already has it (git apply -R --check takes it).
	refused        []applyFailure
	alreadyApplied *applyFailure
}

// File is one file a patch changes.
//
// With a base tree (and for the files a series creates) the patches are
// applied in order as git apply --reject applies them (package
// gitapply): a hunk git places at an offset is read where git places it,
// a hunk git refuses is left out, and a file git refuses whole (a
// creation of a file that exists, a change to one that does not) is left
// as it was. Created, Deleted, Added and Removed say what the patch did
// to the tree so: the lines git placed, numbered where it placed them.
type File struct {
	Path    string
	Created bool
	Deleted bool
	// Old and New are the contents before and after the patch; New is nil
	// when it is unknown (an edit to a file of a tree not given).
	Old, New []byte
	Known    bool   // New is the content after the patch
	Added    []Line // the added lines, numbered in the new file
	Removed  []Line // the removed lines, numbered in the old file
	// refused says git apply refused the file whole: the patch leaves it
	// as it was (Old and New are its content before, nil if there is
	// none) and it is not counted as changed.
	refused bool
	// newSide and oldSide are the lines the hunks show on each side,
	// context included, numbered in the new and the old file.
	newSide, oldSide []Line
}

// applyFailure is what git apply refuses of a patch: a hunk, a file, or
// the whole patch.
type applyFailure struct {
	line int    // of the mail
	path string // the file (its path after the patch), "" for the patch
	msg  string // what, and git's words
}

// fileLine returns the line of the mail on which the diff of path starts:
// its "diff --git" line, or a quilt diff's "--- a/path" line.
func (p *Patch) fileLine(path string) int {
	for _, h := range []string{"\ndiff --git a/" + path + " ", "\n--- a/" + path + "\n", "\n--- a/" + path + "\t", "\n+++ b/" + path + "\n", "\n+++ b/" + path + "\t"} {
		if l := p.line(h); l > 0 {
			return l + 1
		}
	}
	return 1
}

// Line is one line of a file.
type Line struct {
	N    int
	Text string
}

// FileAt returns the content of path after patch n (0: the base): the
// content the last patch up to n that touched it left, else the base
// tree's. ok is false when the file is absent or its content unknown.
func (s *Series) FileAt(path string, n int) (content []byte, ok bool) {
	if v := s.version(path, n); v > 0 {
		f := fileOf(s.Patches[v-1], path)
		if f.Deleted || !f.Known {
			return nil, false
		}
		return f.New, true
	}
	if s.Tree == nil {
		return nil, false
	}
	c, err := s.Tree.ReadFile(path)
	if err != nil {
		return nil, false
	}
	return c, true
}

// Patch returns patch n (1-based) or nil.
func (s *Series) Patch(n int) *Patch {
	if n < 1 || n > len(s.Patches) {
		return nil
	}
	return s.Patches[n-1]
}

// FromGenerated turns a generated series into a Series: the messages are
// the ones kpatch gen writes, parsed as any posted mail is, and every
// file's content after every patch is the generator's.
func FromGenerated(g *series.Series) (*Series, error) {
	s := &Series{Sender: g.Revision.From, Tree: g.Tree,
		Source: fmt.Sprintf("%s generated on %s", g.Revision.Name(), g.Tree.Base)}
	gm, err := g.Messages()
	if err != nil {
		return nil, err
	}
	var msgs []*mail.Message
	for _, m := range gm {
		ms, err := mail.ReadMbox([]byte(m.Text))
		if err != nil {
			return nil, fmt.Errorf("the generated mail %s: %w", m.Filename, err)
		}
		for _, pm := range ms {
			pm.File = m.Filename
		}
		msgs = append(msgs, ms...)
	}
	ps, err := mail.Assemble(msgs)
	if err != nil {
		return nil, fmt.Errorf("the generated mail: %w", err)
	}
	for i, gp := range g.Patches {
		p := fromMail(ps.Patches[i])
		p.Number = gp.Number
		byPath := map[string]*File{}
		for _, f := range p.Files {
			byPath[f.Path] = f
		}
		for _, fc := range gp.Files {
			f := byPath[fc.Path]
			if f == nil {
				return nil, fmt.Errorf("generated patch %d changes %s but its mail does not", gp.Number, fc.Path)
			}
			f.Old, f.New, f.Known = fc.Old, fc.New, true
		}
		s.Patches = append(s.Patches, p)
	}
	return s, nil
}

// mailHint says what verify reads.
const mailHint = "give an mbox (git format-patch --stdout, b4 mbox), a directory of .patch files or a saved thread"

// ReadMail reads a posted series from path with package mail: an
// mbox (git format-patch --stdout, a b4 download), a directory of .patch
// files, or a saved thread such as the seed. tree, when not nil, is the
// base the edits to existing files are applied to.
func ReadMail(path string, tree *kernelsrc.Tree) (*Series, error) {
	ps, unreadable, err := mail.LoadAll(path)
	if errors.Is(err, mail.ErrNotMail) || errors.Is(err, mail.ErrNoPatches) || errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", err, mailHint)
	}
	if err != nil {
		return nil, err
	}
	s := &Series{Source: path, Tree: tree}
	// The sender is the cover letter's; without one, a saved thread's
	// first poster (format-patch files name the author, not the sender).
	if ps.Cover != nil {
		s.Sender = ps.Cover.From
	} else if ps.Thread {
		s.Sender = ps.Patches[0].From
	}
	for i, mp := range ps.Patches {
		p := fromMail(mp)
		p.Number = i + 1 // the patches verify reads, in order (an unreadable one left out)
		s.Patches = append(s.Patches, p)
		s.total = max(s.total, mp.Total)
	}
	s.unreadable = unreadable
	if err := s.rebuild(); err != nil {
		return nil, err
	}
	return s, nil
}

// fromMail is one patch as package mail read it, its lines numbered as
// its hunk headers say (rebuild numbers them where git applies them).
func fromMail(mp *mail.Patch) *Patch {
	p := &Patch{Number: mp.Number, Posted: mp.Number, Subject: mp.Title, Author: mp.Author, Log: mp.Log, Changelog: mp.Changelog,
		Mail: mp.Raw, MailFile: filepath.Base(mp.File), MailLine: mp.Line, SubjectLine: mp.SubjectLine,
		mail: mp, diffs: mp.Files}
	for _, gf := range mp.Files {
		f := &File{Path: gf.NewName, Created: gf.IsNew, Deleted: gf.IsDelete}
		if gf.IsDelete {
			f.Path = gf.OldName
		}
		f.number(gf, nil)
		p.Files = append(p.Files, f)
	}
	return p
}

// number sets f's lines from the hunks of gf: numbered as git applied
// them when hunks is given (a hunk it did not apply left out), else as
// the hunk headers say.
func (f *File) number(gf *gitdiff.File, hunks []*gitapply.Hunk) {
	f.Added, f.Removed, f.newSide, f.oldSide = nil, nil, nil, nil
	for k, fr := range gf.TextFragments {
		o, n := int(fr.OldPosition), int(fr.NewPosition)
		var oldAt, newAt []int
		if hunks != nil {
			if k >= len(hunks) || !hunks[k].Applied {
				continue
			}
			oldAt, newAt = hunks[k].OldLines, hunks[k].NewLines
		}
		oi, ni := 0, 0 // the line's index on each side
		oldN := func() int {
			if oldAt != nil && oi < len(oldAt) {
				return oldAt[oi]
			}
			return o
		}
		newN := func() int {
			if newAt != nil && ni < len(newAt) {
				return newAt[ni]
			}
			return n
		}
		for _, l := range fr.Lines {
			text := strings.TrimSuffix(l.Line, "\n")
			switch l.Op {
			case gitdiff.OpAdd:
				f.Added = append(f.Added, Line{newN(), text})
				f.newSide = append(f.newSide, Line{newN(), text})
				n, ni = n+1, ni+1
			case gitdiff.OpDelete:
				f.Removed = append(f.Removed, Line{oldN(), text})
				f.oldSide = append(f.oldSide, Line{oldN(), text})
				o, oi = o+1, oi+1
			default:
				// context, but not a preprocessor line: its #if or
				// #endif may be outside the hunk
				if !strings.HasPrefix(strings.TrimSpace(text), "#") {
					f.newSide = append(f.newSide, Line{newN(), text})
					f.oldSide = append(f.oldSide, Line{oldN(), text})
				}
				o, oi = o+1, oi+1
				n, ni = n+1, ni+1
			}
		}
	}
}

// rebuild computes the content of every file after every patch: the
// patches are applied in order as git apply --reject applies them (git
// am's words, package gitapply) to the base tree, or without one to the
// files the series creates (the others are checked from their hunks).
// What git refuses is recorded for PATCH_APPLY; a patch that does not
// apply but that git apply -R --check takes is already applied.
func (s *Series) rebuild() error {
	t := &applyTree{base: s.Tree, files: map[string]*treeFile{}}
	for _, p := range s.Patches {
		s.applyPatch(t, p)
	}
	return nil
}

// applyPatch applies p to t, as git am would check it (git apply --index)
// with --reject.
func (s *Series) applyPatch(t *applyTree, p *Patch) {
	// Without a base, only the files the series made are known; the
	// others keep the numbering of their hunks, unchecked. Paths are
	// checked whatever is known: git refuses a bad one on any tree.
	var known []*gitdiff.File
	var files []*File
	for i, gf := range p.diffs {
		if t.knows(gf) {
			known, files = append(known, gf), append(files, p.Files[i])
		}
	}
	if s.Tree == nil {
		if i, err := gitapply.CheckPaths(p.diffs); err != nil {
			path := p.Files[i].Path
			p.refused = append(p.refused, applyFailure{p.fileLine(path), path, invalidPathMsg(err)})
			for _, f := range p.Files {
				s.refuse(t, f)
			}
			return
		}
	}
	if len(known) == 0 {
		return
	}
	opt := gitapply.Options{Reject: true, Index: true}
	res := gitapply.Apply(t, known, opt)
	if res.Err != nil {
		line, path := 1, ""
		for i, fr := range res.Files {
			if fr.Err != nil {
				line, path = p.fileLine(files[i].Path), files[i].Path
			}
		}
		p.refused = append(p.refused, applyFailure{line, path, invalidPathMsg(res.Err)})
		for _, f := range p.Files {
			s.refuse(t, f)
		}
		return
	}
	died := false // git died writing an earlier file: it left this one as it was
	for i, fr := range res.Files {
		f, gf := files[i], known[i]
		if died {
			s.refuse(t, f)
			continue
		}
		died = fr == res.Fatal
		on := t.describe(s, f.Path)
		if fr.Err != nil {
			p.refused = append(p.refused, applyFailure{p.fileLine(f.Path), f.Path,
				fmt.Sprintf("%s does not apply to %s (%s): %s", f.Path, on, quoteAll(fr.Errors()), rebaseHint)})
			s.refuse(t, f)
			continue
		}
		for k, h := range fr.Hunks {
			if h.Applied {
				continue
			}
			fragment := gf.TextFragments[k]
			hdr := fmt.Sprintf("@@ -%s +%s @@", hunkRange(fragment.OldPosition, fragment.OldLines), hunkRange(fragment.NewPosition, fragment.NewLines))
			name := fr.OldName // the name git's messages give
			if name == "" {
				name = fr.NewName
			}
			words := []string{"error: " + h.Err.Error(), "error: " + name + ": patch does not apply"}
			p.refused = append(p.refused, applyFailure{p.hunkLine(f.Path, k), f.Path,
				fmt.Sprintf("hunk %d (%s) of %s does not apply to %s (%s): %s; the rest of the patch is checked as git apply --reject applies it", k+1, hdr, f.Path, on, quoteAll(words), rebaseHint)})
		}
		f.Old, f.New, f.Known = fr.Old, fr.Content, true
		if f.Deleted {
			f.New = nil
		}
		f.number(gf, fr.Hunks)
	}
	if res.AlreadyApplied && len(known) == len(p.diffs) {
		p.alreadyApplied = &applyFailure{p.SubjectLine, "", fmt.Sprintf("the patch is already applied to %s (git apply -R --check takes it): drop it, or give the base it was made on (--base)", t.describeAll(s, p))}
	}
	before := map[string][]byte{}
	for _, fr := range res.Files {
		if fr.Err == nil && fr.OldName != "" && fr.OldName == fr.NewName {
			before[fr.NewName] = fr.Old
		}
	}
	t.write(res.Changes(), before, p.Number)
}

// hunkRange writes one side of a hunk header as git diff does: "12,3",
// "12" for one line.
func hunkRange(start, lines int64) string {
	if lines == 1 {
		return strconv.FormatInt(start, 10)
	}
	return fmt.Sprintf("%d,%d", start, lines)
}

// rebaseHint is what to do about a patch git does not apply.
const rebaseHint = "rebase the patch, or give the base it was made on (--base)"

// invalidPathMsg says that git refuses the whole patch for a path.
func invalidPathMsg(err error) string {
	return fmt.Sprintf("git am refuses the whole patch (\"error: %s\"): name files inside the tree; nothing of this patch is checked against the tree", err)
}

// quoteAll quotes git's messages for a finding: "a", "b".
func quoteAll(msgs []string) string {
	q := make([]string, len(msgs))
	for i, m := range msgs {
		q[i] = strconv.Quote(m)
	}
	return strings.Join(q, ", ")
}

// refuse records that git left f as it was: the patch does not change it.
func (s *Series) refuse(t *applyTree, f *File) {
	f.refused, f.Created, f.Deleted = true, false, false
	f.Added, f.Removed, f.newSide, f.oldSide = nil, nil, nil, nil
	f.Known = t.knowsPath(f.Path)
	f.Old, f.New = nil, nil
	if f.Known {
		if c, err := t.ReadFile(f.Path); err == nil {
			f.Old, f.New = c, c
		}
	}
}

// hunkLine returns the line of p's mail with the header of hunk k
// (0-based) of path's diff, or the diff's first line.
func (p *Patch) hunkLine(path string, k int) int {
	start := p.fileLine(path)
	if p.mail == nil {
		return start
	}
	raw := p.mail.Raw
	// the offset of line start in raw
	off := 0
	for l := p.mail.Line; l < start && off < len(raw); l++ {
		i := strings.IndexByte(raw[off:], '\n')
		if i < 0 {
			return start
		}
		off += i + 1
	}
	line := start
	for n := -1; n < k; {
		i := strings.Index(raw[off:], "\n@@ ")
		if i < 0 {
			return start
		}
		line += strings.Count(raw[off:off+i+1], "\n")
		off += i + 1
		n++
	}
	return line
}

// applyTree is the tree the patches are applied to: the base, and what
// the patches so far wrote (gitapply.Tree).
type applyTree struct {
	base  *kernelsrc.Tree // nil: none given
	files map[string]*treeFile
}

// treeFile is a file as the patches left it.
type treeFile struct {
	content []byte
	mode    uint32
	gone    bool
	by      int // the patch that wrote it
}

// knowsPath reports whether the content of path is known: there is a
// base, or a patch wrote or removed it.
func (t *applyTree) knowsPath(path string) bool {
	_, ok := t.files[path]
	return ok || t.base != nil
}

// knows reports whether the files gf reads are known (a creation reads
// none).
func (t *applyTree) knows(gf *gitdiff.File) bool {
	return gf.IsNew || t.knowsPath(gf.OldName)
}

// Mode is gitapply.Tree's.
func (t *applyTree) Mode(path string) uint32 {
	if f, ok := t.files[path]; ok {
		if f.gone {
			return 0
		}
		return f.mode
	}
	if t.base == nil || path == "" || !t.base.Exists(path) || t.base.IsDir(path) {
		return 0
	}
	m, err := strconv.ParseUint(t.base.Mode(path), 8, 32)
	if err != nil {
		return 0
	}
	return uint32(m)
}

// ReadFile is gitapply.Tree's.
func (t *applyTree) ReadFile(path string) ([]byte, error) {
	if f, ok := t.files[path]; ok {
		if f.gone {
			return nil, fs.ErrNotExist
		}
		return f.content, nil
	}
	if t.base == nil {
		return nil, fs.ErrNotExist
	}
	return t.base.ReadFile(path)
}

// write records what patch n wrote (git rewrites a file whose hunks it
// all refused: that is no change). before has the content the patch
// met of the files it changes in place.
func (t *applyTree) write(changes []gitapply.Change, before map[string][]byte, n int) {
	final := map[string]*treeFile{}
	var order []string
	for _, c := range changes {
		if _, ok := final[c.Path]; !ok {
			order = append(order, c.Path)
		}
		if c.Remove {
			final[c.Path] = &treeFile{gone: true, by: n}
		} else {
			final[c.Path] = &treeFile{content: c.Content, mode: c.Mode, by: n}
		}
	}
	for _, path := range order {
		f := final[path]
		if old, ok := before[path]; ok && !f.gone && t.Mode(path) == f.mode && bytes.Equal(old, f.content) {
			continue
		}
		t.files[path] = f
	}
}

// describe names the tree a patch met path in: "v6.12", "v6.12 after
// patch 3" (the last patch that wrote it), "the file as patch 3 left it".
func (t *applyTree) describe(s *Series, path string) string {
	by := 0
	if f, ok := t.files[path]; ok {
		by = f.by
	}
	switch {
	case s.Tree == nil:
		return fmt.Sprintf("the file as patch %d left it", by)
	case by == 0:
		return s.Tree.Base
	}
	return fmt.Sprintf("%s after patch %d", s.Tree.Base, by)
}

// describeAll names the tree patch p met.
func (t *applyTree) describeAll(s *Series, p *Patch) string {
	base := "the tree"
	if s.Tree != nil {
		base = s.Tree.Base
	}
	if p.Number > 1 {
		return fmt.Sprintf("%s with patches 1-%d", base, p.Number-1)
	}
	return base
}

// line returns the line of p's mail (in MailFile) on which text first
// occurs, or 0.
func (p *Patch) line(text string) int {
	if p.mail == nil {
		return 0
	}
	return p.mail.LineOf(text)
}

// nthLine returns the line of p's mail on which the whole line text
// occurs for the nth time (n >= 1), or 0.
func (p *Patch) nthLine(text string, n int) int {
	if p.mail == nil {
		return 0
	}
	raw, at := p.mail.Raw, 0
	for {
		i := strings.Index(raw[at:], text)
		if i < 0 {
			return 0
		}
		i += at
		whole := (i == 0 || raw[i-1] == '\n') && (i+len(text) == len(raw) || raw[i+len(text)] == '\n')
		if whole {
			if n--; n == 0 {
				return p.mail.Line + strings.Count(raw[:i], "\n")
			}
		}
		at = i + 1
	}
}

// index records which files the series creates and which patches change
// each file.
func (s *Series) index() {
	s.created = map[string]bool{}
	s.changes = map[string][]int{}
	for i, p := range s.Patches {
		for _, f := range p.Files {
			if f.refused {
				continue // git leaves it as it was
			}
			if f.Created {
				s.created[f.Path] = true
			}
			if ch := s.changes[f.Path]; len(ch) == 0 || ch[len(ch)-1] != i+1 {
				s.changes[f.Path] = append(ch, i+1)
			}
		}
	}
}

// changed returns the paths the series changes (those of hunks git
// refuses aside: git leaves them as they were), sorted.
func (s *Series) changed() []string {
	if s.changes == nil {
		s.index()
	}
	return sortedKeys(s.changes)
}

// version returns the last patch up to n that changes path, or 0 (the
// base) when none does.
func (s *Series) version(path string, n int) int {
	if s.changes == nil {
		s.index()
	}
	ch := s.changes[path]
	i := sort.SearchInts(ch, n+1) // the first change after n
	if i == 0 {
		return 0
	}
	return ch[i-1]
}
