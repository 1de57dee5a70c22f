package rangediff

import (
	"bytes"
	"strings"
)

// Mailmap maps the names and addresses of authors to their canonical
// ones, read from a .mailmap file as git reads it (see gitmailmap(5)).
// The zero value and nil map nobody.
type Mailmap struct {
	byEmail map[string]*mailmapEntry // lower-cased address as written in commits
}

// mailmapEntry is what one commit address maps to: a replacement for any
// name, and replacements for particular names.
type mailmapEntry struct {
	mailmapTarget
	byName map[string]*mailmapTarget // lower-cased commit name
}

// mailmapTarget is a canonical name and address; empty means keep.
type mailmapTarget struct {
	name, email string
}

// ParseMailmap reads a .mailmap file. Like git it skips lines it cannot
// read (no <address>) and lets later lines override earlier ones.
func ParseMailmap(data []byte) *Mailmap {
	m := &Mailmap{byEmail: map[string]*mailmapEntry{}}
	for _, line := range bytes.Split(data, []byte("\n")) {
		s := string(line)
		if strings.HasPrefix(s, "#") {
			continue
		}
		name1, email1, rest, ok := parseNameEmail(s, false)
		if !ok {
			continue
		}
		name2, email2, _, hasOld := parseNameEmail(rest, true)
		m.add(name1, email1, name2, email2, hasOld)
	}
	return m
}

// parseNameEmail reads "Name <address>" from the start of s and returns
// the text after the '>' (git's parse_name_and_email): the name without
// surrounding white space, "" when there is none.
func parseNameEmail(s string, allowEmptyEmail bool) (name, email, rest string, ok bool) {
	left := strings.IndexByte(s, '<')
	if left < 0 {
		return "", "", "", false
	}
	right := strings.IndexByte(s[left+1:], '>')
	if right < 0 {
		return "", "", "", false
	}
	right += left + 1
	if !allowEmptyEmail && right == left+1 {
		return "", "", "", false
	}
	name = strings.TrimFunc(s[:left], isCSpace)
	return name, s[left+1 : right], s[right+1:], true
}

// isCSpace is C's isspace in the C locale, as git's mailmap uses it.
func isCSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

// add records one mailmap line: newName and newEmail (either may be "")
// replace oldEmail, only for oldName when it is given. A line with one
// address (hasOld false) maps that address, keeping it.
func (m *Mailmap) add(newName, newEmail, oldName, oldEmail string, hasOld bool) {
	if !hasOld {
		oldEmail, newEmail = newEmail, ""
	}
	key := asciiLower(oldEmail)
	e := m.byEmail[key]
	if e == nil {
		e = &mailmapEntry{}
		m.byEmail[key] = e
	}
	if oldName == "" {
		if newName != "" {
			e.name = newName
		}
		if newEmail != "" {
			e.email = newEmail
		}
		return
	}
	if e.byName == nil {
		e.byName = map[string]*mailmapTarget{}
	}
	e.byName[asciiLower(oldName)] = &mailmapTarget{name: newName, email: newEmail}
}

// Map returns the canonical name and address for an author, as git's
// map_user does: entries for the address and this name (compared without
// regard to case) first, then the entry for the address alone.
func (m *Mailmap) Map(name, email string) (string, string) {
	if m == nil || m.byEmail == nil {
		return name, email
	}
	e := m.byEmail[asciiLower(email)]
	if e == nil {
		return name, email
	}
	t := &e.mailmapTarget
	if sub := e.byName[asciiLower(name)]; sub != nil {
		t = sub
	}
	if t.name != "" {
		name = t.name
	}
	if t.email != "" {
		email = t.email
	}
	return name, email
}

// asciiLower lower-cases ASCII letters only, as strcasecmp in the C
// locale compares.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
