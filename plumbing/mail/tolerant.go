package mail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Unreadable is a file or a message of a series that git am would stop
// at (no mail headers, a diff that does not parse), left out by LoadAll.
type Unreadable struct {
	File     string // the file it is in
	Line     int    // where in File it starts
	Position int    // its place in the series, 1-based, as git am meets it
	Subject  string // its subject, "" when it has none
	Err      error  // why it cannot be read
}

// LoadAll reads a series as Load does, and as git am goes on with --skip:
// a file of a directory that is no readable mail, or a patch whose mail
// or diff does not parse, is left out and returned with why, and the
// other patches keep their places in the series (an unnumbered series is
// numbered in the order git am meets its mails, the unreadable ones
// counted). A reply ("Re: [PATCH ...]") whose body holds a diff, and
// whose patch the series does not have otherwise, is a patch, as git am
// applies it. What Load refuses as a whole (no patch at all, a file that
// is no mail, a saved thread) it refuses too.
func LoadAll(path string) (*Series, []Unreadable, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	var msgs []*Message
	var bad []Unreadable
	var order []any // *Message or *Unreadable, as met
	if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, nil, err
		}
		var names []string
		for _, e := range ents {
			if !e.IsDir() && isMailFile(e.Name()) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			p := filepath.Join(path, n)
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, nil, err
			}
			if err := utf16Error(p, data); err != nil {
				return nil, nil, err
			}
			ms, err := readMbox(data, p)
			if err != nil {
				u := &Unreadable{File: p, Line: errLine(err, 1), Err: located(p, err)}
				order = append(order, u)
				continue
			}
			for _, m := range ms {
				order = append(order, m)
			}
			msgs = append(msgs, ms...)
		}
		if len(msgs) == 0 && len(order) == 0 {
			return nil, nil, fmt.Errorf("%s: a directory without .patch, .eml, .mbx, .mbox or .cover files: %w", path, ErrNoPatches)
		}
	} else {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		if err := utf16Error(path, data); err != nil {
			return nil, nil, err
		}
		if !isMbox(data) {
			s, err := Load(path) // a saved thread, read whole
			return s, nil, err
		}
		if msgs, err = readMbox(data, path); err != nil {
			return nil, nil, located(path, err)
		}
		for _, m := range msgs {
			order = append(order, m)
		}
	}
	s, bad, err := assembleAll(order)
	return s, bad, located(path, err)
}

// assembleAll is Assemble for LoadAll: order holds the messages and the
// files that could not be read as mail, as met.
func assembleAll(order []any) (*Series, []Unreadable, error) {
	s := &Series{}
	numbered := true
	var bad []*Unreadable
	type entry struct {
		p *Patch
		u *Unreadable
	}
	var entries []entry
	titles := map[string]bool{}
	numbers := map[int]bool{}
	var replies []*Message // replies that hold a diff: patches if theirs is missing
	for _, o := range order {
		if u, ok := o.(*Unreadable); ok {
			bad = append(bad, u)
			entries = append(entries, entry{u: u})
			continue
		}
		m := o.(*Message)
		sub := ParseSubject(m.Subject)
		if sub.Reply || !sub.Patch && !holdsDiff(m.Body) {
			if sub.Reply && holdsDiff(unquoted(m.Body)) {
				replies = append(replies, m)
			}
			s.Replies = append(s.Replies, m)
			continue
		}
		s.Version = sub.Version
		if sub.Numbered && sub.Number == 0 {
			s.Cover = m
			continue
		}
		numbered = numbered && sub.Numbered
		p, err := parsePatch(m, sub.Number, sub.Total, sub.Version, sub.Title)
		if err != nil {
			u := &Unreadable{File: m.File, Line: errLine(err, m.Line), Position: sub.Number, Subject: sub.Title, Err: err}
			bad = append(bad, u)
			entries = append(entries, entry{u: u})
			continue
		}
		titles[p.Title] = true
		numbers[p.Number] = true
		entries = append(entries, entry{p: p})
	}
	for _, m := range replies {
		sub := ParseSubject(m.Subject)
		title := strings.Join(strings.Fields(sub.Title), " ")
		if titles[title] || sub.Numbered && numbers[sub.Number] {
			continue // a reply about a patch the series has: its review
		}
		p, err := parsePatch(m, sub.Number, sub.Total, sub.Version, sub.Title)
		if err != nil {
			continue // quoted code, or a sketch in a review: no patch
		}
		numbered = numbered && sub.Numbered
		titles[title] = true
		entries = append(entries, entry{p: p})
		for i, r := range s.Replies {
			if r == m {
				s.Replies = append(s.Replies[:i:i], s.Replies[i+1:]...)
				break
			}
		}
	}
	for i, e := range entries {
		switch {
		case !numbered && e.p != nil:
			e.p.Number = i + 1
		case e.u != nil && (!numbered || e.u.Position == 0):
			e.u.Position = i + 1 // a mail with no subject: its place among the files
		}
		if e.p != nil {
			s.Patches = append(s.Patches, e.p)
		}
	}
	if len(s.Patches) == 0 {
		if len(bad) > 0 {
			return nil, nil, bad[0].Err
		}
		return nil, nil, ErrNoPatches
	}
	if !numbered {
		for _, p := range s.Patches {
			p.Total = len(entries)
		}
	} else {
		sortByNumber(s.Patches, func(p *Patch) int { return p.Number })
		if len(bad) == 0 {
			if err := complete(s.Patches); err != nil {
				return nil, nil, err
			}
		} else if err := distinctNumbers(s.Patches); err != nil {
			return nil, nil, err
		}
	}
	out := make([]Unreadable, len(bad))
	for i, u := range bad {
		out[i] = *u
	}
	return s, out, nil
}

// errLine returns the line err names in its file, else line.
func errLine(err error, line int) int {
	var le *locError
	if errors.As(err, &le) && le.line > 0 {
		return le.line
	}
	return line
}

// distinctNumbers refuses two patches of one number (what complete
// checks besides the gaps an unreadable patch leaves).
func distinctNumbers(ps []*Patch) error {
	for i := 1; i < len(ps); i++ {
		if ps[i].Number == ps[i-1].Number {
			return ps[i].errorf("two patches numbered %d: give one series", ps[i].Number)
		}
	}
	return nil
}

// unquoted returns body without its quoted lines ("> ..."): what a
// reply says itself.
func unquoted(body string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(body, "\n") {
		if !strings.HasPrefix(l, ">") {
			b.WriteString(l)
		}
	}
	return b.String()
}
