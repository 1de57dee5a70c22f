package mail

import (
	"fmt"
	netmail "net/mail"
	"strings"
	"unicode/utf8"
)

// Addresses are written as RFC 5322 wants them and as git format-patch
// writes the From header (pretty.c's pp_user_info): a display name holding
// a special (one of ()<>[]:;@,." and \) is quoted, with " and \ escaped; a
// display name holding non-ASCII characters is an RFC 2047 Q-encoded word
// (several, one per line, where it would pass 76 columns); other names are
// written as they are, wrapped at 78 columns like a subject; and the
// address goes on a line of its own when it would pass the limit. In To and
// Cc every address starts on a line of its own, after "To: " or four
// spaces, as git format-patch writes its --to and --cc.

// ParseAddress splits one address, in any form a person, git or
// MAINTAINERS writes it, into its display name and address. As git and
// get_maintainer.pl read "Name <address>", the name is everything before
// the angle brackets, as it is (so "Steven Rostedt (Google)" keeps its
// parentheses and an unquoted "Jose E. Marchesi" its period), except that
// a name that is one quoted string is unquoted and RFC 2047 encoded words
// are decoded. A bare address is read as RFC 5322 reads it.
func ParseAddress(s string) (name, addr string, err error) {
	s = strings.TrimSpace(unfold(s))
	lt, gt := strings.LastIndexByte(s, '<'), strings.LastIndexByte(s, '>')
	if lt < 0 || gt < lt || strings.TrimSpace(s[gt+1:]) != "" {
		if simpleAddrSpec(s) {
			return "", s, nil
		}
		a, err := netmail.ParseAddress(s)
		if err != nil {
			return "", "", fmt.Errorf("%q is not a mail address (want \"Name <user@host>\" or user@host)", s)
		}
		return a.Name, a.Address, nil
	}
	addr = strings.TrimSpace(s[lt+1 : gt])
	if !simpleAddrSpec(addr) {
		if a, err := netmail.ParseAddress("<" + addr + ">"); err != nil || a.Address != addr {
			return "", "", fmt.Errorf("%q is not a mail address: bad address %q", s, addr)
		}
	}
	name = strings.TrimSpace(s[:lt])
	switch {
	case isQuotedString(name):
		name = unquoteName(name)
	case strings.Contains(name, "=?"):
		if a, err := netmail.ParseAddress(s); err == nil {
			name = a.Name
		}
	}
	return name, addr, nil
}

// simpleAddrSpec reports whether a is an address of the common form
// dot-atom@dot-atom, which RFC 5322 (and net/mail) accepts as it is: a
// quick answer for the addresses of MAINTAINERS; others are left to
// net/mail.
func simpleAddrSpec(a string) bool {
	at := strings.IndexByte(a, '@')
	if at <= 0 || at == len(a)-1 {
		return false
	}
	dotAtom := func(s string, atext string) bool {
		if s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
			return false
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || strings.IndexByte(atext, c) >= 0) {
				return false
			}
		}
		return true
	}
	return dotAtom(a[:at], "!#$%&'*+/=?^_`{|}~-") && dotAtom(a[at+1:], "-")
}

// isQuotedString reports whether n is one RFC 5322 quoted string.
func isQuotedString(n string) bool {
	if len(n) < 2 || n[0] != '"' || n[len(n)-1] != '"' {
		return false
	}
	for i := 1; i < len(n)-1; i++ {
		switch n[i] {
		case '\\':
			if i++; i == len(n)-1 {
				return false // the closing quote is escaped
			}
		case '"':
			return false
		}
	}
	return true
}

// unquoteName removes the quotes around a quoted display name, and the
// backslashes of its escapes.
func unquoteName(n string) string {
	var b strings.Builder
	for i := 1; i < len(n)-1; i++ {
		if n[i] == '\\' && i+1 < len(n)-1 {
			i++
		}
		b.WriteByte(n[i])
	}
	return b.String()
}

// unfold undoes the folding of a header value: a line break before
// whitespace goes.
func unfold(s string) string {
	if strings.IndexByte(s, '\n') < 0 {
		return s
	}
	return unfolder.Replace(s)
}

var unfolder = strings.NewReplacer("\r\n ", " ", "\r\n\t", "\t", "\n ", " ", "\n\t", "\t")

// NormalizeAddress rewrites one address as RFC 5322 wants it, as the
// From header holds it but on one line: the form recipient lists (and
// --json) hold. An address that cannot be parsed is kept as it is.
func NormalizeAddress(s string) string {
	name, addr, err := ParseAddress(s)
	if err != nil {
		return strings.TrimSpace(s)
	}
	return unfold(formatAddress(name, addr, len("To: ")))
}

// headerAddress writes one address of a To or Cc header, where it starts
// at column 4 ("To: ", "Cc: " or four spaces), folded as git would.
func headerAddress(s string) string {
	name, addr, err := ParseAddress(s)
	if err != nil {
		return strings.TrimSpace(s)
	}
	return formatAddress(name, addr, len("To: "))
}

// formatAddress writes name and addr as git writes an author in the From
// header, for an address starting at column col.
func formatAddress(name, addr string, col int) string {
	if name == "" {
		return addr
	}
	var b strings.Builder
	max := 78
	switch {
	case needsRFC2047(name):
		b.WriteString(rfc2047(name, col, true))
		max = 76 // per RFC 2047
	case needsRFC822Quoting(name):
		b.WriteString(wrapName(rfc822Quote(name), col))
	default:
		b.WriteString(wrapName(name, col))
	}
	s := b.String()
	last := col + len(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		last = len(s) - i - 1
	}
	if max < last+len(" <")+len(addr)+len(">") {
		b.WriteByte('\n')
	}
	b.WriteString(" <" + addr + ">")
	return b.String()
}

// wrapName wraps a display name at 78 columns as git's
// strbuf_add_wrapped_bytes(..., -col, 1, 78) does for an ASCII name that
// starts at column col: a line breaks at the last whitespace before the
// limit, the next one starts with one space, other whitespace (runs of
// spaces, tabs) is kept as it is.
func wrapName(text string, col int) string {
	const width, indent2 = 78, 1
	if col+len(text) <= width && strings.IndexByte(text, '\t') < 0 {
		return text // fits: nothing to wrap
	}
	var b strings.Builder
	w, bol, space := col, 0, 0 // space < 0: none since the line began
	for t := 0; ; {
		var c byte
		if t < len(text) {
			c = text[t]
		}
		if c != 0 && !isSpace(c) {
			w++
			t++
			continue
		}
		if w <= width || space < 0 {
			start := bol
			if c == 0 && t == start {
				return b.String()
			}
			if space >= 0 {
				start = space
			} else {
				b.WriteString(strings.Repeat(" ", indent2))
			}
			b.WriteString(text[start:t])
			if c == 0 {
				return b.String()
			}
			space = t
			if c == '\t' {
				w |= 7
			}
			w++
			t++
			continue
		}
		b.WriteByte('\n')
		t = space
		if isSpace(text[t]) {
			t++
		}
		bol, space, w = t, -1, indent2
	}
}

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// needsRFC2047 is git's needs_rfc2047_encoding.
func needsRFC2047(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] == '\n' || s[i] == '=' && i+1 < len(s) && s[i+1] == '?' {
			return true
		}
	}
	return false
}

// needsRFC822Quoting is git's needs_rfc822_quoting: the name holds an RFC
// 5322 special.
func needsRFC822Quoting(s string) bool { return strings.ContainsAny(s, `()<>[]:;@,."\`) }

// rfc822Quote is git's add_rfc822_quoted.
func rfc822Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// rfc2047 is git's add_rfc2047 in UTF-8, for a display name (address set,
// RFC2047_ADDRESS) or a subject, starting at column col: Q-encoded words
// on lines of at most 76 columns, a character never split across two.
func rfc2047(s string, col int, address bool) string {
	const charset, maxLine = "UTF-8", 76
	var b strings.Builder
	b.WriteString("=?" + charset + "?q?")
	lineLen := col + len(charset) + 5
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		special := n > 1 || rfc2047Special(s[i], address)
		encLen := 1
		if special {
			encLen = 3 * n
		}
		if lineLen+encLen+2 > maxLine {
			b.WriteString("?=\n =?" + charset + "?q?")
			lineLen = len(charset) + 5 + 1
		}
		for j := i; j < i+n; j++ {
			if special {
				fmt.Fprintf(&b, "=%02X", s[j])
			} else {
				b.WriteByte(s[j])
			}
		}
		lineLen += encLen
		i += n
	}
	b.WriteString("?=")
	return b.String()
}

// rfc2047Special is git's is_rfc2047_special: in a subject, whitespace,
// "=", "?", "_" and what is not printable ASCII are encoded; in a display
// name (address set) only letters, digits and !*+-/ stand for themselves
// (RFC 2047, 5 (3)).
func rfc2047Special(c byte, address bool) bool {
	if c >= 0x80 || c < 0x20 || c == 0x7f {
		return true
	}
	if c == ' ' || c == '=' || c == '?' || c == '_' {
		return true
	}
	if !address {
		return false
	}
	isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	return !(isAlnum || strings.IndexByte("!*+-/", c) >= 0)
}

// splitAddresses splits the value of a To or Cc header into its
// addresses, at the commas outside quoted strings, angle brackets and
// comments.
func splitAddresses(v string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	add := func(end int) {
		if a := strings.TrimSpace(v[start:end]); a != "" {
			out = append(out, a)
		}
		start = end + 1
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '<' || c == '(':
			depth++
		case (c == '>' || c == ')') && depth > 0:
			depth--
		case c == ',' && depth == 0:
			add(i)
		}
	}
	add(len(v))
	return out
}
