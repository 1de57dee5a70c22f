package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

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

}

// Patch is one patch of a series.
type Patch struct {
	Number    int
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
}

// File is one file a patch changes.
type File struct {
	Path    string
	Created bool
	Deleted bool
	// Old and New are the contents before and after the patch; New is nil
	// when it is unknown (an edit to a file of a tree not given, or one
	// whose hunks do not apply to it).
	Old, New []byte
	Known    bool   // New is the content after the patch
	Added    []Line // the added lines, numbered in the new file
	Removed  []Line // the removed lines, numbered in the old file
	// noApply says which hunk did not apply to the base tree (and where
	// the mail has it), when one did not.
	noApply *hunkFailure
	// newSide and oldSide are the lines the hunks show on each side,
	// context included, numbered in the new and the old file.
	newSide, oldSide []Line
}

// hunkFailure is a hunk of a patch that does not apply to the base tree.
type hunkFailure struct {
	line int    // of the mail
	msg  string // which hunk, and why
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

// applyFailure describes the hunk of f (gf as parsed) that err says did
// not apply.
func applyFailure(p *Patch, f *File, gf *gitdiff.File, base string, err error) *hunkFailure {
	n := 0
	var ae *gitdiff.ApplyError
	if errors.As(err, &ae) {
		n = ae.Fragment
	}
	what := "a hunk"
	line := p.fileLine(f.Path)
	if n >= 1 && n <= len(gf.TextFragments) {
		fr := gf.TextFragments[n-1]
		hdr := fmt.Sprintf("@@ -%d,%d +%d,%d @@", fr.OldPosition, fr.OldLines, fr.NewPosition, fr.NewLines)
		what = fmt.Sprintf("hunk %d (%s)", n, hdr)
		if l := p.line("\n" + hdr); l > 0 {
			line = l + 1
		}
	}
	reason, _, _ := strings.Cut(err.Error(), "\n")
	return &hunkFailure{line, fmt.Sprintf("%s of %s does not apply to %s (%s): the patch is checked from its hunks only; rebase it or give the base it was made on (--base)", what, f.Path, base, reason)}
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
	ps, err := mail.Load(path)
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
	for _, mp := range ps.Patches {
		s.Patches = append(s.Patches, fromMail(mp))
	}
	if err := s.rebuild(); err != nil {
		return nil, err
	}
	return s, nil
}

// fromMail is one patch as package mail read it.
func fromMail(mp *mail.Patch) *Patch {
	p := &Patch{Number: mp.Number, Subject: mp.Title, Author: mp.Author, Log: mp.Log, Changelog: mp.Changelog,
		Mail: mp.Raw, MailFile: filepath.Base(mp.File), MailLine: mp.Line, SubjectLine: mp.SubjectLine,
		mail: mp, diffs: mp.Files}
	for _, gf := range mp.Files {
		f := &File{Path: gf.NewName, Created: gf.IsNew, Deleted: gf.IsDelete}
		if gf.IsDelete {
			f.Path = gf.OldName
		}
		for _, fr := range gf.TextFragments {
			o, n := int(fr.OldPosition), int(fr.NewPosition)
			for _, l := range fr.Lines {
				text := strings.TrimSuffix(l.Line, "\n")
				switch l.Op {
				case gitdiff.OpAdd:
					f.Added = append(f.Added, Line{n, text})
					f.newSide = append(f.newSide, Line{n, text})
					n++
				case gitdiff.OpDelete:
					f.Removed = append(f.Removed, Line{o, text})
					f.oldSide = append(f.oldSide, Line{o, text})
					o++
				default:
					// context, but not a preprocessor line: its #if or
					// #endif may be outside the hunk
					if !strings.HasPrefix(strings.TrimSpace(text), "#") {
						f.newSide = append(f.newSide, Line{n, text})
						f.oldSide = append(f.oldSide, Line{o, text})
					}
					o++
					n++
				}
			}
		}
		p.Files = append(p.Files, f)
	}
	return p
}

// rebuild computes the content of every file after every patch, as far as
// it can: created files from the patches alone, existing files from the
// base tree when there is one and the hunks apply (else they are checked
// hunk by hunk). A hunk that does not apply to a file the series created
// is an error: the mail is damaged or was edited by hand.
func (s *Series) rebuild() error {
	cur := map[string][]byte{}
	known := map[string]bool{}
	created := map[string]bool{}
	for _, p := range s.Patches {
		for i, f := range p.Files {
			gf := p.diffs[i]
			if f.Created {
				created[f.Path] = true
			}
			if _, seen := known[f.Path]; !seen {
				known[f.Path] = false
				if f.Created {
					known[f.Path] = true
				} else if s.Tree != nil {
					if c, err := s.Tree.ReadFile(f.Path); err == nil {
						cur[f.Path], known[f.Path] = c, true
					}
				}
			}
			if !known[f.Path] {
				continue
			}
			f.Old = cur[f.Path]
			if f.Deleted {
				delete(cur, f.Path)
				continue
			}
			var dst bytes.Buffer
			if err := gitdiff.Apply(&dst, bytes.NewReader(cur[f.Path]), gf); err != nil {
				if created[f.Path] {
					return fmt.Errorf("%s:%d: patch %d (%q) does not apply to %s as the series created it (%v): give the patches as they were sent",
						p.mail.File, p.fileLine(f.Path), p.Number, p.Subject, f.Path, err)
				}
				known[f.Path] = false
				f.noApply = applyFailure(p, f, gf, s.Tree.Base, err)
				continue
			}
			cur[f.Path] = dst.Bytes()
			f.New, f.Known = dst.Bytes(), true
		}
	}
	return nil
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
			if f.Created {
				s.created[f.Path] = true
			}
			if ch := s.changes[f.Path]; len(ch) == 0 || ch[len(ch)-1] != i+1 {
				s.changes[f.Path] = append(ch, i+1)
			}
		}
	}
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
