package mail

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"mime"
	netmail "net/mail"
	"net/textproto"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/plumbing/ident"
)

// Message is one mail of a series or its discussion.
type Message struct {
	Commit    string // the commit id of the "From <sha> Mon Sep 17 ..." line, "" if none
	From      string // the sender
	Date      string
	Subject   string   // unfolded and decoded, prefix included
	MessageID string   // without angle brackets
	InReplyTo string   // without angle brackets
	To, Cc    []string // the recipients, one address each, as the headers give them
	Body      string

	// Where the message was read: File is the path of the file ("" when
	// the caller gave bytes without a name), Line the line of File on
	// which the message starts (its "From " line, or its subject line in a
	// thread saved as text), SubjectLine the line of its Subject header
	// (its subject line in a saved thread), and Raw the message as it
	// stands in File from Line on. For a gzip-compressed thread the lines
	// are those of the uncompressed text.
	File              string
	Line, SubjectLine int
	Raw               string

	savedThread bool // read from a thread saved as text, not from a mail
}

// LineOf returns the line of File on which text first occurs in the
// message (text may start with a newline: the line after it is meant
// only if text starts there), or 0 when the message does not hold it.
func (m *Message) LineOf(text string) int {
	i := strings.Index(m.Raw, text)
	if i < 0 {
		return 0
	}
	return m.Line + strings.Count(m.Raw[:i], "\n")
}

// locError is an error about one line of a file ("" when the caller gave
// bytes without a name).
type locError struct {
	file string
	line int
	msg  string
}

func (e *locError) Error() string {
	if e.file == "" {
		return fmt.Sprintf("line %d: %s", e.line, e.msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
}

// errorf is an error about the message, at its first line.
func (m *Message) errorf(format string, args ...any) error {
	return m.errorAt(m.Line, format, args...)
}

// errorAt is an error about line of the message's file.
func (m *Message) errorAt(line int, format string, args ...any) error {
	return &locError{m.File, line, fmt.Sprintf(format, args...)}
}

// Patch is one patch of a series.
type Patch struct {
	Message
	Number, Total int
	Version       int    // from "vN" in the prefix, 1 if none
	Title         string // the subject without the bracketed prefix
	// Author is who git am records as the author: the in-body From:
	// line, else the sender, read as git mailinfo reads it ("Name
	// <address>"; see package ident).
	Author string
	// AuthorDate is the date git am records: the in-body Date: line,
	// else the mail's Date, written as git writes dates in mail
	// (DateLayout) when it reads as one.
	AuthorDate string
	// Log is the commit message below the title, trailers included, as
	// git am records it (cleaned as git stripspace cleans it: no trailing
	// white space, no runs of blank lines, no blank lines at the start or
	// the end), ending in a newline; "" for a patch that has only a
	// title.
	Log       string
	Changelog string // the notes between "---" and the diffstat, "" if none
	Diffstat  string // the diffstat block, "" if none
	Diff      string // from the first "diff --git" line (or a quilt diff's first header) to the signature
	Signature string // the text after the "-- " line that ends the mail, "" for none
	// Files is Diff parsed by go-gitdiff, one entry per file changed.
	Files []*gitdiff.File

	inBodyFrom bool // Author is from an in-body From: line
}

// MailText returns the patch as a mail that git am and checkpatch.pl
// read, line for line with Raw (its line i is line Line+i-1 of File): Raw
// itself when the patch was read from a mail, with or without a leading
// "From " line; for a thread saved as text, whose subject, blank and
// "[Sender]" lines are no mail header, those three lines become a From
// and a Subject header and the blank line that ends a header.
func (p *Patch) MailText() string {
	if !p.savedThread {
		return p.Raw
	}
	rest := p.Raw
	for i := 0; i < 3; i++ {
		_, rest, _ = strings.Cut(rest, "\n")
	}
	return fmt.Sprintf("From: %s\nSubject: [PATCH] %s\n\n", p.Author, p.Title) + rest
}

// CommitMessage returns what git am records: title, blank line, log
// (the title alone, with its newline, when there is no log).
func (p *Patch) CommitMessage() string {
	switch {
	case p.Log == "":
		return stripspace(p.Title)
	case p.Title == "":
		return p.Log
	}
	return p.Title + "\n\n" + p.Log
}

// Series is a posted series.
type Series struct {
	Version int
	Cover   *Message // nil if the series has none
	Patches []*Patch // in order, numbered 1..n
	Replies []*Message
	// Thread is true for a thread saved as text (FromThread): there every
	// message's From is who posted it, where git format-patch files have
	// the commit's author.
	Thread bool
}

var (
	fromLine = regexp.MustCompile(`^From ([0-9a-f]{40}) Mon Sep 17 00:00:00 2001$`)
	mboxFrom = regexp.MustCompile(`^From \S+ +\w{3} \w{3} +\d{1,2} \d{1,2}:\d{2}:\d{2} \d{4}$`)
)

// ErrNoPatches is returned for input that holds no patch messages.
var ErrNoPatches = errors.New("no patches found (no message with a diff that is not a reply)")

// ErrNotMail is returned for a file that is neither an mbox (or a single
// mail) nor a thread saved as text.
var ErrNotMail = errors.New("not an mbox, a mail or a saved thread")

// Load reads a series from a directory of patch files, an mbox, or a
// thread saved as text. Errors name the file, and the line where one
// message is at fault.
func Load(path string) (*Series, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var msgs []*Message
	if st.IsDir() {
		msgs, err = ReadDir(path)
		if err == nil && len(msgs) == 0 {
			return nil, fmt.Errorf("%s: a directory without .patch, .eml, .mbx, .mbox or .cover files: %w", path, ErrNoPatches)
		}
	} else {
		var data []byte
		if data, err = os.ReadFile(path); err != nil {
			return nil, err
		}
		if err := utf16Error(path, data); err != nil {
			return nil, err
		}
		if isMbox(data) {
			msgs, err = readMbox(data, path)
		} else {
			s, err := fromThread(data, path)
			if errors.Is(err, ErrNoMessages) {
				return nil, fmt.Errorf("%s: %w", path, ErrNotMail)
			}
			if err == nil {
				err = complete(s.Patches)
			}
			if err != nil {
				return nil, located(path, err)
			}
			return s, nil
		}
	}
	if err != nil {
		return nil, located(path, err)
	}
	s, err := Assemble(msgs)
	return s, located(path, err)
}

// located prefixes err with path unless it names its place already.
func located(path string, err error) error {
	var le *locError
	if err == nil || errors.As(err, &le) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// isMbox reports whether data starts like an mbox or a mail.
func isMbox(data []byte) bool {
	return bytes.HasPrefix(data, []byte("From ")) || regexp.MustCompile(`^[A-Za-z-]+: `).Match(data)
}

// mailExts are the names of the files of a directory that ReadDir reads:
// git format-patch's .patch, a saved mail's .eml, b4's .mbx and .cover.
var mailExts = []string{".patch", ".eml", ".mbx", ".mbox", ".cover"}

// isMailFile reports whether ReadDir reads the file called name.
func isMailFile(name string) bool {
	for _, e := range mailExts {
		if strings.HasSuffix(name, e) {
			return true
		}
	}
	return false
}

// ReadDir reads every mail file of dir (see mailExts), in name order.
func ReadDir(dir string) ([]*Message, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && isMailFile(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var out []*Message
	for _, n := range names {
		p := filepath.Join(dir, n)
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if err := utf16Error(p, data); err != nil {
			return nil, err
		}
		ms, err := readMbox(data, p)
		if err != nil {
			return nil, located(p, err)
		}
		out = append(out, ms...)
	}
	return out, nil
}

// ReadMbox splits an mbox (or a single mail) into messages: a new message
// starts at a "From " line that follows a blank line or starts the file.
func ReadMbox(data []byte) ([]*Message, error) { return readMbox(data, "") }

// readMbox is ReadMbox for the file named file.
func readMbox(data []byte, file string) ([]*Message, error) {
	var out []*Message
	var cur []string
	start := 1 // the line cur starts on
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		m, err := parseMail(cur, file, start)
		if err != nil {
			return err
		}
		out = append(out, m)
		start += len(cur)
		cur = nil
		return nil
	}
	prevBlank := true
	for _, l := range mailLines(data) {
		if prevBlank && mboxFrom.MatchString(strings.TrimSuffix(l, "\r")) && (len(cur) == 0 || isHeaderStart(cur)) {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		cur = append(cur, l)
		prevBlank = l == "" || l == "\r"
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// mailLines splits a file of mail into its lines, without their line
// ends, however long they are. A file whose every line ends in CRLF (as
// a mailer may save one) loses its carriage returns, as git am drops
// them; in any other file they are part of the lines they end (a diff of
// a file with CRLF lines), as git am --keep-cr keeps them.
func mailLines(data []byte) []string {
	text := strings.TrimSuffix(string(data), "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		if !strings.HasSuffix(l, "\r") {
			return lines
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// isHeaderStart: the lines collected so far form a complete message (they
// have a header and a body), so a "From " line may start the next one.
func isHeaderStart(lines []string) bool {
	for _, l := range lines {
		if l == "" || l == "\r" {
			return true
		}
	}
	return false
}

// parseMail parses the lines of one message, which start on line start of
// file.
func parseMail(lines []string, file string, start int) (*Message, error) {
	m := &Message{File: file, Line: start, Raw: strings.Join(lines, "\n") + "\n"}
	i := 0
	if i < len(lines) && strings.HasPrefix(lines[i], "From ") {
		if sm := fromLine.FindStringSubmatch(lines[i]); sm != nil {
			m.Commit = sm[1]
		}
		i++
	}
	var headers []string
	var at []int // the line of each header
	for ; i < len(lines) && lines[i] != "" && lines[i] != "\r"; i++ {
		l := lines[i]
		if (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) && len(headers) > 0 {
			headers[len(headers)-1] += " " + strings.TrimSpace(l)
			continue
		}
		headers = append(headers, l)
		at = append(at, start+i)
	}
	dec := new(mime.WordDecoder)
	mimeHeader := netmail.Header{}
	for hi, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if d, err := dec.DecodeHeader(v); err == nil {
			v = d
		}
		switch strings.ToLower(k) {
		case "from":
			m.From = v
		case "date":
			m.Date = v
		case "subject":
			m.Subject, m.SubjectLine = v, at[hi]
		case "message-id":
			m.MessageID = strings.Trim(v, "<> ")
		case "in-reply-to":
			m.InReplyTo = strings.Trim(v, "<> ")
		case "to":
			m.To = append(m.To, splitAddresses(v)...)
		case "cc":
			m.Cc = append(m.Cc, splitAddresses(v)...)
		case "content-type", "content-transfer-encoding":
			mimeHeader[textproto.CanonicalMIMEHeaderKey(k)] = []string{v}
		}
	}
	if i < len(lines) {
		i++
	}
	body := lines[i:]
	if len(lines) > 0 && strings.HasPrefix(lines[0], "From mboxrd@z ") {
		// public-inbox (lore) and b4 mbox mark mboxrd with this
		// separator: a body line ">From ", ">>From ", ... was quoted.
		body = append([]string(nil), body...)
		for j, l := range body {
			if strings.HasPrefix(l, ">") && strings.HasPrefix(strings.TrimLeft(l, ">"), "From ") {
				body[j] = l[1:]
			}
		}
	}
	m.Body = strings.Join(body, "\n")
	if m.Body != "" {
		m.Body += "\n"
	}
	if bodyEncoded(mimeHeader) {
		// Archives serve patches quoted-printable, base64 or as a part
		// of a multipart mail; the text is what git am would apply.
		// (LineOf then finds only what the mail holds verbatim.)
		body, err := bodyText(mimeHeader, strings.NewReader(m.Body))
		if err != nil {
			return nil, m.errorf("the body does not decode as its Content-Type and Content-Transfer-Encoding say (%v): give the mail as the archive served it", err)
		}
		m.Body = body
	}
	if m.Subject == "" {
		return nil, m.errorf("a message without a Subject header: give whole mails, as git format-patch or b4 writes them")
	}
	return m, nil
}

// Assemble sorts messages into the cover letter, the patches and replies,
// as git am would read them. A patch is a message that is not a reply and
// whose subject has a "[PATCH ...]" prefix, or has none but whose body
// holds a diff (git format-patch -k). When every patch is numbered
// ("[PATCH m/n]") they are put in the order of their numbers and must be
// 1..n; otherwise (git format-patch -N or -k, single patches) they are
// taken in the order given, numbered 1..n, as git am applies them. A
// numbered "0/n" message is the cover letter.
func Assemble(msgs []*Message) (*Series, error) {
	s := &Series{}
	numbered := true
	var subs []Subject
	for _, m := range msgs {
		sub := ParseSubject(m.Subject)
		if sub.Reply || !sub.Patch && !holdsDiff(m.Body) {
			s.Replies = append(s.Replies, m)
			continue
		}
		s.Version = sub.Version
		if sub.Numbered && sub.Number == 0 {
			s.Cover = m
			continue
		}
		p, err := parsePatch(m, sub.Number, sub.Total, sub.Version, sub.Title)
		if err != nil {
			return nil, err
		}
		numbered = numbered && sub.Numbered
		s.Patches = append(s.Patches, p)
		subs = append(subs, sub)
	}
	if len(s.Patches) == 0 {
		return nil, ErrNoPatches
	}
	if !numbered {
		for i, p := range s.Patches {
			p.Number, p.Total = i+1, len(s.Patches)
		}
		return s, nil
	}
	sortByNumber(s.Patches, func(p *Patch) int { return p.Number })
	if err := complete(s.Patches); err != nil {
		return nil, err
	}
	return s, nil
}

// holdsDiff reports whether a mail body holds a diff: git's, or one
// without git's headers (quilt's).
func holdsDiff(body string) bool {
	return strings.HasPrefix(body, "diff --git ") || strings.Contains(body, "\ndiff --git ") || traditionalDiff(body) >= 0
}

// complete checks that patches, sorted, are 1..n of n, each once (see
// numberingError); the error names the patch at fault.
func complete(ps []*Patch) error {
	ns := make([]numbered, len(ps))
	for i, p := range ps {
		ns[i] = numbered{p.Number, p.Total, p.Title}
	}
	switch i, msg := numberingError(ns, true); {
	case i >= 0:
		return ps[i].errorf("%s", msg)
	case i == -2:
		return errors.New(msg)
	}
	return nil
}

// hint says what to do about a patch that does not parse.
const hint = "give the patch as git format-patch or b4 wrote it"

func parsePatch(m *Message, n, total, v int, title string) (*Patch, error) {
	p := &Patch{Message: *m, Number: n, Total: total, Version: v, Title: strings.Join(strings.Fields(title), " "), Author: m.From, AuthorDate: m.Date}
	ib, body := readInBody(m.Body)
	if ib.from != nil {
		p.Author, p.inBodyFrom = *ib.from, true
	}
	if name, addr, ok := ident.Parse(p.Author); ok {
		p.Author = name + " <" + addr + ">"
	}
	if ib.subject != nil {
		p.Title = ParseSubject(*ib.subject).Title
	}
	if ib.date != nil {
		p.AuthorDate = strings.TrimSpace(*ib.date)
	}
	if d, err := netmail.ParseDate(p.AuthorDate); err == nil {
		p.AuthorDate = d.Format(DateLayout)
	}
	log, rest, ok := cutPatchBreak(body)
	if !ok {
		if log, sig, empty := emptyCommit(body); empty {
			p.Log, p.Signature = stripspace(log), sig
			return p, p.check()
		}
		return nil, m.errorf("patch %d of %d (%q): no \"---\" line before the diff (the mail cut short?): %s", n, total, p.Title, hint)
	}
	p.Log = stripspace(log)
	diffAt := strings.Index("\n"+rest, "\ndiff --git ")
	quilt := false
	if diffAt < 0 {
		diffAt, quilt = traditionalDiff(rest), true
	}
	if diffAt < 0 {
		return nil, m.errorf("patch %d of %d (%q): no diff (the mail cut short?): %s", n, total, p.Title, hint)
	}
	head, diff := rest[:diffAt], rest[diffAt:]
	if i := strings.LastIndex(diff, "\n-- \n"); i >= 0 {
		diff, p.Signature = diff[:i+1], strings.TrimRight(diff[i+len("\n-- \n"):], "\n")
	}
	p.Diff = diff
	p.Changelog, p.Diffstat = splitNotes(head)
	if err := p.check(); err != nil {
		return nil, err
	}
	if i, l, bad := corruptHunk(p.Diff); bad {
		at := p.Line
		if d := p.LineOf("\n" + l + "\n"); d > 0 {
			at = d + 1
		}
		return nil, p.errorAt(at, "patch %d of %d (%q): corrupt hunk header %q (git apply: \"corrupt patch\"), line %d of the diff: %s", n, total, p.Title, l, i+1, hint)
	}
	files, _, err := gitdiff.Parse(strings.NewReader(p.Diff))
	if err != nil {
		// go-gitdiff counts lines from the diff's first line.
		at, msg := p.Line, err.Error()
		first, _, _ := strings.Cut(p.Diff, "\n")
		if d := p.LineOf("\n" + first + "\n"); d > 0 {
			at = d + 1
			if sm := gitdiffLine.FindStringSubmatch(msg); sm != nil {
				dn, _ := strconv.Atoi(sm[1])
				at, msg = at+dn-1, sm[2]
			}
		}
		return nil, p.errorAt(at, "patch %d of %d (%q): the diff does not parse (%s; the mail cut short?): %s", n, total, p.Title, msg, hint)
	}
	// git apply -p1: the names of a section without git's header (all of
	// a quilt diff's, or one such section among git's) lose their first
	// directory (a/, b/); go-gitdiff strips those of git's headers itself
	kinds := sectionKinds(p.Diff)
	for i, f := range files {
		if quilt || len(kinds) == len(files) && !kinds[i] {
			f.OldName, f.NewName = stripFirst(f.OldName), stripFirst(f.NewName)
		}
	}
	p.Files = files
	return p, nil
}

// sectionKinds returns, for each file section of diff in order, whether
// it has git's header ("diff --git") or only the "--- "/"+++ " lines of
// diff -u.
func sectionKinds(diff string) []bool {
	var kinds []bool
	lines := strings.Split(diff, "\n")
	inGit := false // in a git header, before its hunks
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			kinds = append(kinds, true)
			inGit = true
		case strings.HasPrefix(l, "@@ "):
			inGit = false
		case strings.HasPrefix(l, "--- ") && !inGit && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") &&
			i+2 < len(lines) && strings.HasPrefix(lines[i+2], "@@ "):
			kinds = append(kinds, false)
		}
	}
	return kinds
}

// cutPatchBreak cuts a patch's body where git mailinfo ends the commit
// message: at the first line that is "---" (with only blanks after it),
// starts with "--- " and a name (a diff without the separator, as quilt
// writes them), "diff -" or "Index: ". The break line is left out when it
// is the separator, kept (it starts the diff) otherwise.
func cutPatchBreak(body string) (log, rest string, ok bool) {
	for off := 0; off < len(body); {
		end := strings.IndexByte(body[off:], '\n')
		if end < 0 {
			end = len(body) - off
		}
		line := body[off : off+end]
		next := min(off+end+1, len(body))
		switch {
		case strings.HasPrefix(line, "---") && strings.TrimSpace(line[3:]) == "":
			return body[:off], body[next:], true
		case strings.HasPrefix(line, "--- ") && len(line) > 4 && line[4] != ' ' && line[4] != '\t',
			strings.HasPrefix(line, "diff -"), strings.HasPrefix(line, "Index: "):
			return body[:off], body[off:], true
		}
		off = next
	}
	return body, "", false
}

// traditionalDiff returns the offset in rest of the first file of a diff
// without git's headers (quilt's, diff -u's): its "Index:" or "diff" line,
// or its "--- " line followed by "+++ " and a hunk; -1 when there is none.
func traditionalDiff(rest string) int {
	lines := strings.SplitAfter(rest, "\n")
	off := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "--- ") && i+2 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") && strings.HasPrefix(lines[i+2], "@@ -") {
			start := off
			// the header lines quilt and diff write before it
			for j := i - 1; j >= 0; j-- {
				h := lines[j]
				if !strings.HasPrefix(h, "Index: ") && !strings.HasPrefix(h, "diff -") && !strings.HasPrefix(h, "====") {
					break
				}
				start -= len(h)
			}
			return start
		}
		off += len(l)
	}
	return -1
}

// stripFirst drops the first directory of a patch name, as git apply -p1
// does; /dev/null and names without a directory stay.
func stripFirst(name string) string {
	if _, rest, ok := strings.Cut(name, "/"); ok && name != "/dev/null" {
		return rest
	}
	return name
}

// gitdiffLine matches go-gitdiff's parse errors.
var gitdiffLine = regexp.MustCompile(`^gitdiff: line (\d+): (.*)$`)

// check fails for a patch whose title, commit message or notes are not
// UTF-8 (the diff may be: a file of the tree may be in another charset),
// naming the first line that is not. git am would re-encode such a mail;
// the rules and reports that read it want text.
func (p *Patch) check() error {
	for _, part := range []string{p.Title, p.Log, p.Changelog} {
		if utf8.ValidString(part) {
			continue
		}
		at := p.Line
		for i, l := range strings.Split(p.Raw, "\n") {
			if !utf8.ValidString(l) {
				at += i
				break
			}
		}
		return p.errorAt(at, "patch %d of %d (%q): the commit message is not UTF-8: convert the mail (iconv -f LATIN1 -t UTF-8, or from the charset its Content-Type names) and give it again",
			p.Number, p.Total, strings.ToValidUTF8(p.Title, "?"))
	}
	return nil
}

var statLine = regexp.MustCompile(`^ (.* \| +(\d+|Bin).*|\d+ files? changed.*|(create|delete) mode .*|rename .*|mode change .*)$`)

// splitNotes splits the text between "---" and the diff into the notes and
// the diffstat, the trailing run of diffstat lines.
func splitNotes(head string) (notes, stat string) {
	lines := strings.Split(strings.Trim(head, "\n"), "\n")
	i := len(lines)
	for i > 0 && statLine.MatchString(lines[i-1]) {
		i--
	}
	if i < len(lines) {
		stat = strings.Join(lines[i:], "\n") + "\n"
	}
	notes = strings.Trim(strings.Join(lines[:i], "\n"), "\n")
	if notes != "" {
		notes += "\n"
	}
	return notes, stat
}

// cutLine cuts s around the first line that equals sep.
func cutLine(s, sep string) (before, after string, ok bool) {
	if strings.HasPrefix(s, sep+"\n") {
		return "", s[len(sep)+1:], true
	}
	i := strings.Index(s, "\n"+sep+"\n")
	if i < 0 {
		return s, "", false
	}
	return s[:i+1], s[i+len(sep)+2:], true
}

// FromThread reads a thread saved as text (the seed's form) with
// ParseThread. Senders there have no address; an author without one gets the
// address of the Signed-off-by line that starts with the same name.
func FromThread(data []byte) (*Series, error) { return fromThread(data, "") }

// fromThread is FromThread for the file named file.
func fromThread(data []byte, file string) (*Series, error) {
	text, err := ThreadText(data)
	if err != nil {
		return nil, err
	}
	th, err := ParseThread(text)
	var le *locError
	if errors.As(err, &le) && le.file == "" {
		le.file = file
	}
	if err != nil {
		return nil, err
	}
	// A message runs from its subject line to the end of its body.
	all := string(text)
	starts := []int{0} // the offset of every line
	for i, c := range text {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	msg := func(om *ThreadMessage) Message {
		m := Message{Subject: om.Subject, From: om.Sender, Body: om.Body, File: file, Line: om.Line, SubjectLine: om.Line, savedThread: true}
		raw := all[starts[om.Line-1]:]
		if i := strings.Index(raw, om.Body); i >= 0 && om.Body != "" {
			m.Raw = raw[:i+len(om.Body)]
		} else {
			m.Raw, _, _ = strings.Cut(raw, "\n")
			m.Raw += "\n"
		}
		return m
	}
	s := &Series{Version: th.Version, Thread: true}
	if th.Cover != nil {
		c := msg(th.Cover)
		s.Cover = &c
	}
	for _, r := range th.Replies {
		m := msg(r)
		s.Replies = append(s.Replies, &m)
	}
	for _, op := range th.Patches {
		author := op.Author
		if author == "" {
			author = withAddress(op.Sender, op.Log)
		}
		p := &Patch{
			Message: msg(&op.ThreadMessage),
			Number:  op.Number, Total: th.Total, Version: th.Version, Title: op.Title, Author: author,
			Log: op.Log, Changelog: op.Changelog, Diffstat: op.Diffstat, Diff: op.Diff, Files: op.Files,
		}
		if err := p.check(); err != nil {
			return nil, err
		}
		s.Patches = append(s.Patches, p)
	}
	if len(s.Patches) == 0 {
		return nil, ErrNoPatches
	}
	return s, nil
}

var sobRE = regexp.MustCompile(`(?m)^Signed-off-by: (.*)$`)

func withAddress(name, log string) string {
	if a, err := netmail.ParseAddress(name); err == nil && a.Address != "" {
		return name
	}
	for _, m := range sobRE.FindAllStringSubmatch(log, -1) {
		a, err := netmail.ParseAddress(m[1])
		if err == nil && strings.HasPrefix(a.Name, name) {
			return name + " <" + a.Address + ">"
		}
	}
	return name
}

// ContentID returns a stand-in commit id for a patch that has none: the
// first 12 hex digits of the SHA-1 of its commit message and diff.
func (p *Patch) ContentID() string {
	h := sha1.Sum([]byte(p.CommitMessage() + p.Diff))
	return fmt.Sprintf("%x", h[:])[:12]
}

// LoadMessages reads every message of a file or directory: the patches,
// the cover letter and the replies, in the order found. Unlike Load it
// takes part of a series (what review replies are read from).
func LoadMessages(path string) ([]*Message, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		msgs, err := ReadDir(path)
		if err == nil && len(msgs) == 0 {
			return nil, fmt.Errorf("%s: a directory without .patch, .eml, .mbx, .mbox or .cover files: %w", path, ErrNotMail)
		}
		return msgs, located(path, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if isMbox(data) {
		msgs, err := readMbox(data, path)
		return msgs, located(path, err)
	}
	s, err := fromThread(data, path)
	if errors.Is(err, ErrNoMessages) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotMail)
	}
	if err != nil {
		return nil, located(path, err)
	}
	var out []*Message
	if s.Cover != nil {
		out = append(out, s.Cover)
	}
	for _, p := range s.Patches {
		out = append(out, &p.Message)
	}
	return append(out, s.Replies...), nil
}
