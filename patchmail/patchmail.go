package patchmail

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"kpatch/oracle"
)

// Message is one mail of a series or its discussion.
type Message struct {
	Commit    string // the commit id of the "From <sha> Mon Sep 17 ..." line, "" if none
	From      string // the sender
	Date      string
	Subject   string // unfolded and decoded, prefix included
	MessageID string // without angle brackets
	InReplyTo string // without angle brackets
	Body      string
}

// Patch is one patch of a series.
type Patch struct {
	Message
	Number, Total int
	Version       int    // from "vN" in the prefix, 1 if none
	Title         string // the subject without the bracketed prefix
	Author        string // the in-body From: line, else the sender
	Log           string // the commit message below the title, trailers included, ending in a newline
	Changelog     string // the notes between "---" and the diffstat, "" if none
	Diffstat      string // the diffstat block, "" if none
	Diff          string // from the first "diff --git" line to the signature
}

// CommitMessage returns what git am records: title, blank line, log.
func (p *Patch) CommitMessage() string { return p.Title + "\n\n" + p.Log }

// Series is a posted series.
type Series struct {
	Version int
	Cover   *Message // nil if the series has none
	Patches []*Patch // in order, numbered 1..n
	Replies []*Message
}

var (
	prefixRE = regexp.MustCompile(`^\s*(?:(?:Re|RE|re|Aw|AW):\s*)*\[([^\]]*)\]\s*(.*)$`)
	numRE    = regexp.MustCompile(`(?:^|\s)(\d+)/(\d+)(?:\s|$)`)
	verRE    = regexp.MustCompile(`(?:^|\s)[vV](\d+)(?:\s|$)`)
	fromLine = regexp.MustCompile(`^From ([0-9a-f]{40}) Mon Sep 17 00:00:00 2001$`)
	mboxFrom = regexp.MustCompile(`^From \S+ +\w{3} \w{3} +\d{1,2} \d{1,2}:\d{2}:\d{2} \d{4}$`)
)

// ErrNoPatches is returned for input that holds no patch messages.
var ErrNoPatches = errors.New("no [PATCH m/n] messages found")

// Load reads a series from a directory of patch files, an mbox, or a
// thread saved as text.
func Load(path string) (*Series, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var msgs []*Message
	if st.IsDir() {
		msgs, err = ReadDir(path)
	} else {
		var data []byte
		if data, err = os.ReadFile(path); err != nil {
			return nil, err
		}
		if isMbox(data) {
			msgs, err = ReadMbox(data)
		} else {
			return FromThread(data)
		}
	}
	if err != nil {
		return nil, err
	}
	s, err := Assemble(msgs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// isMbox reports whether data starts like an mbox or a mail.
func isMbox(data []byte) bool {
	return bytes.HasPrefix(data, []byte("From ")) || regexp.MustCompile(`^[A-Za-z-]+: `).Match(data)
}

// ReadDir reads every *.patch and *.eml file of dir, in name order.
func ReadDir(dir string) ([]*Message, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".patch") || strings.HasSuffix(e.Name(), ".eml")) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var out []*Message
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		ms, err := ReadMbox(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, ms...)
	}
	return out, nil
}

// ReadMbox splits an mbox (or a single mail) into messages: a new message
// starts at a "From " line that follows a blank line or starts the file.
func ReadMbox(data []byte) ([]*Message, error) {
	var out []*Message
	var cur []string
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		m, err := parseMail(cur)
		if err != nil {
			return err
		}
		out = append(out, m)
		cur = nil
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	prevBlank := true
	for sc.Scan() {
		l := sc.Text()
		if mboxFrom.MatchString(l) && prevBlank && (len(cur) == 0 || isHeaderStart(cur)) {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		cur = append(cur, l)
		prevBlank = l == ""
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, sc.Err()
}

// isHeaderStart: the lines collected so far form a complete message (they
// have a header and a body), so a "From " line may start the next one.
func isHeaderStart(lines []string) bool {
	for _, l := range lines {
		if l == "" {
			return true
		}
	}
	return false
}

func parseMail(lines []string) (*Message, error) {
	m := &Message{}
	i := 0
	if i < len(lines) && strings.HasPrefix(lines[i], "From ") {
		if sm := fromLine.FindStringSubmatch(lines[i]); sm != nil {
			m.Commit = sm[1]
		}
		i++
	}
	var headers []string
	for ; i < len(lines) && lines[i] != ""; i++ {
		l := lines[i]
		if (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) && len(headers) > 0 {
			headers[len(headers)-1] += " " + strings.TrimSpace(l)
			continue
		}
		headers = append(headers, l)
	}
	dec := new(mime.WordDecoder)
	for _, h := range headers {
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
			m.Subject = v
		case "message-id":
			m.MessageID = strings.Trim(v, "<> ")
		case "in-reply-to":
			m.InReplyTo = strings.Trim(v, "<> ")
		}
	}
	if i < len(lines) {
		i++
	}
	m.Body = strings.Join(lines[i:], "\n")
	if m.Body != "" {
		m.Body += "\n"
	}
	if m.Subject == "" {
		return nil, errors.New("a message without a Subject header")
	}
	return m, nil
}

// Assemble sorts messages into the cover letter, the patches and replies.
func Assemble(msgs []*Message) (*Series, error) {
	s := &Series{}
	for _, m := range msgs {
		sm := prefixRE.FindStringSubmatch(m.Subject)
		reply := regexp.MustCompile(`^\s*(?i:re|aw):`).MatchString(m.Subject)
		if sm == nil || reply || !strings.Contains(strings.ToUpper(sm[1]), "PATCH") {
			s.Replies = append(s.Replies, m)
			continue
		}
		n, total := 1, 1
		if nm := numRE.FindStringSubmatch(sm[1]); nm != nil {
			n, _ = strconv.Atoi(nm[1])
			total, _ = strconv.Atoi(nm[2])
		}
		v := 1
		if vm := verRE.FindStringSubmatch(sm[1]); vm != nil {
			v, _ = strconv.Atoi(vm[1])
		}
		s.Version = v
		if n == 0 {
			s.Cover = m
			continue
		}
		p, err := parsePatch(m, n, total, v, sm[2])
		if err != nil {
			return nil, err
		}
		s.Patches = append(s.Patches, p)
	}
	if len(s.Patches) == 0 {
		return nil, ErrNoPatches
	}
	sort.SliceStable(s.Patches, func(i, j int) bool { return s.Patches[i].Number < s.Patches[j].Number })
	for i, p := range s.Patches {
		if p.Number != i+1 {
			return nil, fmt.Errorf("patch %d of %d is missing (found %q)", i+1, p.Total, p.Subject)
		}
	}
	return s, nil
}

func parsePatch(m *Message, n, total, v int, title string) (*Patch, error) {
	p := &Patch{Message: *m, Number: n, Total: total, Version: v, Title: strings.Join(strings.Fields(title), " "), Author: m.From}
	body := m.Body
	if strings.HasPrefix(body, "From: ") {
		l, rest, _ := strings.Cut(body, "\n")
		p.Author = strings.TrimPrefix(l, "From: ")
		body = strings.TrimLeft(rest, "\n")
	}
	log, rest, ok := cutLine(body, "---")
	if !ok {
		return nil, fmt.Errorf("patch %d (%q): no \"---\" line before the diff", n, m.Subject)
	}
	p.Log = strings.TrimRight(log, "\n") + "\n"
	diffAt := strings.Index("\n"+rest, "\ndiff --git ")
	if diffAt < 0 {
		return nil, fmt.Errorf("patch %d (%q): no diff", n, m.Subject)
	}
	head, diff := rest[:diffAt], rest[diffAt:]
	if i := strings.LastIndex(diff, "\n-- \n"); i >= 0 {
		diff = diff[:i+1]
	}
	p.Diff = diff
	p.Changelog, p.Diffstat = splitNotes(head)
	return p, nil
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

// FromThread reads a thread saved as text (the seed's form) with package
// oracle. Senders there have no address; an author without one gets the
// address of the Signed-off-by line that starts with the same name.
func FromThread(data []byte) (*Series, error) {
	th, err := oracle.Parse(data)
	if err != nil {
		return nil, err
	}
	s := &Series{Version: th.Version}
	if th.Cover != nil {
		s.Cover = &Message{Subject: th.Cover.Subject, From: th.Cover.Sender, Body: th.Cover.Body}
	}
	for _, r := range th.Replies {
		s.Replies = append(s.Replies, &Message{Subject: r.Subject, From: r.Sender, Body: r.Body})
	}
	for _, op := range th.Patches {
		author := op.Author
		if author == "" {
			author = withAddress(op.Sender, op.Log)
		}
		body := op.Body
		if strings.HasPrefix(body, "From: ") {
			_, body, _ = strings.Cut(body, "\n")
			body = strings.TrimLeft(body, "\n")
		}
		_, rest, _ := cutLine(body, "---")
		diff := rest[strings.Index("\n"+rest, "\ndiff --git "):]
		if i := strings.LastIndex(diff, "\n-- \n"); i >= 0 {
			diff = diff[:i+1]
		}
		s.Patches = append(s.Patches, &Patch{
			Message: Message{Subject: op.Subject, From: op.Sender, Body: op.Body},
			Number:  op.Number, Total: th.Total, Version: th.Version, Title: op.Title, Author: author,
			Log: op.Log, Changelog: op.Changelog, Diffstat: op.Diffstat, Diff: diff,
		})
	}
	if len(s.Patches) == 0 {
		return nil, ErrNoPatches
	}
	return s, nil
}

var sobRE = regexp.MustCompile(`(?m)^Signed-off-by: (.*)$`)

func withAddress(name, log string) string {
	if a, err := mail.ParseAddress(name); err == nil && a.Address != "" {
		return name
	}
	for _, m := range sobRE.FindAllStringSubmatch(log, -1) {
		a, err := mail.ParseAddress(m[1])
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
// the cover letter and the replies, in the order found.
func LoadMessages(path string) ([]*Message, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return ReadDir(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if isMbox(data) {
		return ReadMbox(data)
	}
	s, err := FromThread(data)
	if err != nil {
		return nil, err
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

// PatchSubject parses "[PATCH vN m/n] title" (or "Re: [PATCH ...] title"):
// the patch number (0 for the cover letter), whether it is a reply, and the
// title. ok is false for other subjects.
func PatchSubject(subject string) (n int, reply bool, title string, ok bool) {
	sm := prefixRE.FindStringSubmatch(subject)
	if sm == nil || !strings.Contains(strings.ToUpper(sm[1]), "PATCH") {
		return 0, false, "", false
	}
	reply = regexp.MustCompile(`^\s*(?i:re|aw):`).MatchString(subject)
	n = 1
	if nm := numRE.FindStringSubmatch(sm[1]); nm != nil {
		n, _ = strconv.Atoi(nm[1])
	}
	return n, reply, strings.Join(strings.Fields(sm[2]), " "), true
}
