// Package ident reads a person from a mail's From: header as git am
// records the author: git mailinfo's handle_from and the trimming of
// git's ident.c. Package mail reads patch authors with it, and package
// rangediff shows them as git range-diff does.
package ident

import "strings"

// Parse reads a mailbox (the value of a From: header, RFC 2047 words
// already decoded) the way git mailinfo's handle_from does, and returns
// the name and address git am records: quotes and backslash escapes
// removed, "address (Name)" turned around, a name that is empty, longer
// than 60 bytes or holds '@', '<' or '>' replaced by the address, and
// the characters git's ident.c calls crud trimmed from both ends of each.
// ok is false when there is no '@' in it.
func Parse(from string) (name, email string, ok bool) {
	f := unquotePairs(from)
	at := strings.IndexByte(f, '@')
	if at < 0 {
		return "", "", false
	}
	start := at
	for start > 0 {
		c := f[start-1]
		if isSpaceByte(c) {
			break
		}
		if c == '<' {
			f = f[:start-1] + " " + f[start:]
			break
		}
		start--
	}
	end := start + strings.IndexAny(f[start:], " \n\t\r\v\f>")
	if end < start {
		end = len(f)
	}
	email = f[start:end]
	rest := f[:start]
	if end < len(f) {
		rest += f[end+1:]
	}
	name = strings.Join(strings.FieldsFunc(rest, func(r rune) bool { return r < 0x80 && isSpaceByte(byte(r)) }), " ")
	if len(name) > 1 && name[0] == '(' && name[len(name)-1] == ')' {
		name = name[1 : len(name)-1]
	}
	if name == "" || len(name) > 60 || strings.ContainsAny(name, "@<>") {
		name = email
	}
	// git commit drops "crud" around the name and the address.
	return trimCrud(name), trimCrud(email), true
}

// unquotePairs removes the double quotes of quoted strings and the
// backslashes of quoted pairs, keeping comments' parentheses (git's
// unquote_quoted_pair).
func unquotePairs(s string) string {
	var b strings.Builder
	var comment func(i int) int
	quoted := func(i int) int {
		for ; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if i+1 < len(s) {
					i++
					b.WriteByte(s[i])
				}
			case '"':
				return i + 1
			default:
				b.WriteByte(s[i])
			}
		}
		return i
	}
	comment = func(i int) int {
		b.WriteByte('(')
		for ; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if i+1 < len(s) {
					i++
					b.WriteByte(s[i])
				}
			case '(':
				i = comment(i+1) - 1
			case ')':
				b.WriteByte(')')
				return i + 1
			default:
				b.WriteByte(s[i])
			}
		}
		return i
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '"':
			i = quoted(i + 1)
		case '(':
			i = comment(i + 1)
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// trimCrud removes the characters git's ident.c calls crud from both
// ends of s.
func trimCrud(s string) string {
	crud := func(c byte) bool {
		return c <= 32 || strings.IndexByte(".,:;<>\"\\'", c) >= 0
	}
	for len(s) > 0 && crud(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && crud(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
