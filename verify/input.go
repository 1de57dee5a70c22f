package verify

import (
	"bytes"
	"fmt"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/kernelsrc"
	"kpatch/oracle"
	"kpatch/series"
)

// Series is a patch series as verify sees it: the messages and, where
// known, the content of every file it touches after every patch.
type Series struct {
	Source  string          // what was read: "v11 generated on v6.12", a file
	Sender  string          // who posts the series ("Name <addr>" or a name)
	Patches []*Patch        // in order
	Tree    *kernelsrc.Tree // the base tree, nil when none was given
	created map[string]bool // the files the series creates

}

// Patch is one patch of a series.
type Patch struct {
	Number    int
	Subject   string // without the "[PATCH ...]" prefix
	Author    string // "Name <addr>"
	Log       string // the commit message with its trailers
	Changelog string // the notes between "---" and the diffstat
	Files     []*File
	diffs     []*gitdiff.File
	Mail      string // the whole message, as posted or generated
	MailFile  string // the file it was read from (or would be written to)
	MailLine  int    // the line of MailFile on which Mail starts
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
	for i := n; i >= 1; i-- {
		if i > len(s.Patches) {
			continue
		}
		for _, f := range s.Patches[i-1].Files {
			if f.Path == path {
				if f.Deleted || !f.Known {
					return nil, false
				}
				return f.New, true
			}
		}
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
		Source: fmt.Sprintf("v%d generated on %s", g.Revision.Version, g.Tree.Base)}
	msgs := g.Messages()
	for i, gp := range g.Patches {
		m := msgs[i+1]
		p, err := parseMail(m.Text, m.Filename, 1)
		if err != nil {
			return nil, err
		}
		p.Number = gp.Number
		byPath := map[string]*File{}
		for _, f := range p.Files {
			byPath[f.Path] = f
		}
		for _, fc := range gp.Files {
			f := byPath[fc.Path]
			if f == nil {
				return nil, fmt.Errorf("verify: patch %d: %s changed but not in its mail", gp.Number, fc.Path)
			}
			f.Old, f.New, f.Known = fc.Old, fc.New, true
		}
		s.Patches = append(s.Patches, p)
	}
	return s, nil
}

// ReadMail reads a posted series from path: an mbox (git format-patch
// --stdout, a b4 download), a directory of .patch files, or a saved thread
// such as the seed. tree, when not nil, is the base the edits to existing
// files are applied to.
func ReadMail(path string, tree *kernelsrc.Tree) (*Series, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	s := &Series{Source: path, Tree: tree}
	switch {
	case st.IsDir():
		err = s.readDir(path)
	default:
		var data []byte
		data, err = os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if bytes.HasPrefix(data, []byte("From ")) {
			err = s.readMbox(data, path)
		} else {
			err = s.readThread(data, path)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(s.Patches) == 0 {
		return nil, fmt.Errorf("%s: no patches found: give an mbox, a directory of .patch files or a saved thread", path)
	}
	for i, p := range s.Patches {
		if p.Number == 0 {
			p.Number = i + 1
		}
	}
	s.rebuild()
	return s, nil
}

func (s *Series) readDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".patch") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		if err := s.addMessage(string(data), n, 1); err != nil {
			return err
		}
	}
	return nil
}

// mboxFrom matches the "From " line that starts a message of an mbox.
var mboxFrom = regexp.MustCompile(`(?m)^From [^ \n]+ +[A-Z][a-z][a-z] [A-Z][a-z][a-z] .*\d{4}\n`)

func (s *Series) readMbox(data []byte, name string) error {
	locs := mboxFrom.FindAllIndex(data, -1)
	if len(locs) == 0 {
		return fmt.Errorf("%s: no \"From \" lines: not an mbox", name)
	}
	for i, l := range locs {
		end := len(data)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		line := 1 + bytes.Count(data[:l[0]], []byte("\n"))
		if err := s.addMessage(string(data[l[0]:end]), filepath.Base(name), line); err != nil {
			return err
		}
	}
	return nil
}

// patchSubject matches "[PATCH v11 03/14] rest" and "[PATCH 3/14] rest".
var patchSubject = regexp.MustCompile(`^\[[^\]]*?(?:(\d+)/(\d+))?\]\s*(.*)$`)

// addMessage adds a patch, or takes the sender from a cover letter.
func (s *Series) addMessage(text, file string, line int) error {
	hdr, err := mail.ReadMessage(strings.NewReader(strings.SplitN(text, "\n", 2)[1]))
	if err != nil {
		return fmt.Errorf("%s:%d: %w", file, line, err)
	}
	subj, _ := new(mime.WordDecoder).DecodeHeader(hdr.Header.Get("Subject"))
	if m := patchSubject.FindStringSubmatch(subj); m != nil && m[1] != "" {
		if n, _ := strconv.Atoi(m[1]); n == 0 {
			s.Sender = hdr.Header.Get("From")
			return nil
		}
	}
	if !strings.Contains(text, "\ndiff --git ") {
		return nil // a reply or a cover letter without a number
	}
	p, err := parseMail(text, file, line)
	if err != nil {
		return err
	}
	s.Patches = append(s.Patches, p)
	return nil
}

// parseMail parses one git format-patch message.
func parseMail(text, file string, line int) (*Patch, error) {
	_, rest, _ := strings.Cut(text, "\n") // the "From <sha>" line
	msg, err := mail.ReadMessage(strings.NewReader(rest))
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", file, line, err)
	}
	dec := new(mime.WordDecoder)
	subj, _ := dec.DecodeHeader(msg.Header.Get("Subject"))
	from, _ := dec.DecodeHeader(msg.Header.Get("From"))
	p := &Patch{Author: from, Mail: text, MailFile: file, MailLine: line}
	if m := patchSubject.FindStringSubmatch(subj); m != nil {
		p.Number, _ = strconv.Atoi(m[1])
		subj = m[3]
	}
	p.Subject = subj
	p.SubjectLine = p.line("\nSubject: ") + 1
	_, body, ok := strings.Cut(text, "\n\n")
	if !ok {
		return nil, fmt.Errorf("%s:%d: no message body", file, line)
	}
	if err := p.parseBody(body); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", file, line, err)
	}
	return p, nil
}

// parseBody splits a patch body into commit message, changelog and diff
// (the layout oracle reads from the thread).
func (p *Patch) parseBody(body string) error {
	if strings.HasPrefix(body, "From: ") {
		nl := strings.IndexByte(body, '\n')
		p.Author = strings.TrimPrefix(body[:nl], "From: ")
		body = strings.TrimPrefix(body[nl+1:], "\n")
	}
	sep := strings.Index(body, "\n---\n")
	if sep < 0 {
		return fmt.Errorf("no \"---\" line after the commit message")
	}
	p.Log = body[:sep+1]
	rest := body[sep+len("\n---\n"):]
	diffAt := strings.Index(rest, "\ndiff --git ")
	if diffAt < 0 {
		return fmt.Errorf("no diff")
	}
	paras := strings.Split(strings.TrimSuffix(rest[:diffAt+1], "\n"), "\n\n")
	if len(paras) > 1 {
		p.Changelog = strings.Join(paras[:len(paras)-1], "\n\n") + "\n"
	}
	files, _, err := gitdiff.Parse(strings.NewReader(rest[diffAt+1:]))
	if err != nil {
		return err
	}
	for _, gf := range files {
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
					n++
				case gitdiff.OpDelete:
					f.Removed = append(f.Removed, Line{o, text})
					o++
				default:
					o++
					n++
				}
			}
		}
		p.Files = append(p.Files, f)
		p.diffs = append(p.diffs, gf)
	}
	return nil
}

// readThread reads a saved thread (the seed's format) with package oracle.
func (s *Series) readThread(data []byte, name string) error {
	t, err := oracle.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: not an mbox, and not a saved thread (%v): give an mbox, a directory of .patch files or a saved thread", name, err)
	}
	if t.Cover != nil {
		s.Sender = t.Cover.Sender
	}
	text := string(data)
	for _, tp := range t.Patches {
		p := &Patch{Number: tp.Number, Subject: tp.Title, Author: tp.Author, MailFile: filepath.Base(name)}
		if p.Author == "" {
			p.Author = tp.Sender
		}
		if s.Sender == "" {
			s.Sender = tp.Sender
		}
		// Mail runs from the subject line to the end of the body.
		start := lineOffset(text, tp.Line)
		p.Mail = text[start:]
		if i := strings.Index(p.Mail, tp.Body); i >= 0 {
			p.Mail = p.Mail[:i+len(tp.Body)]
		}
		p.MailLine, p.SubjectLine = tp.Line, tp.Line
		if err := p.parseBody(tp.Body); err != nil {
			return fmt.Errorf("%s:%d: %w", name, tp.Line, err)
		}
		if p.Author == "" {
			p.Author = tp.Sender
		}
		s.Patches = append(s.Patches, p)
	}
	return nil
}

// lineOffset returns the byte offset of line n (1-based) of text.
func lineOffset(text string, n int) int {
	off := 0
	for i := 1; i < n; i++ {
		j := strings.IndexByte(text[off:], '\n')
		if j < 0 {
			return len(text)
		}
		off += j + 1
	}
	return off
}

// rebuild computes the content of every file after every patch, as far as
// it can: created files from the patches alone, existing files from the
// base tree when there is one and the hunks apply.
func (s *Series) rebuild() {
	cur := map[string][]byte{}
	known := map[string]bool{}
	for _, p := range s.Patches {
		for i, f := range p.Files {
			gf := p.diffs[i]
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
				known[f.Path] = false
				continue
			}
			cur[f.Path] = dst.Bytes()
			f.New, f.Known = dst.Bytes(), true
		}
	}
}

// line returns the line of p's mail (in MailFile) on which text first
// occurs, or 0.
func (p *Patch) line(text string) int {
	i := strings.Index(p.Mail, text)
	if i < 0 {
		return 0
	}
	return p.MailLine + strings.Count(p.Mail[:i], "\n")
}

// index records which files the series creates.
func (s *Series) index() {
	s.created = map[string]bool{}
	for _, p := range s.Patches {
		for _, f := range p.Files {
			if f.Created {
				s.created[f.Path] = true
			}
		}
	}
}
