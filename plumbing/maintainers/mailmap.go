package maintainers

import (
	"regexp"
	"strings"
)

// Mailmap is a .mailmap as get_maintainer.pl reads it (read_mailmap),
// which differs from git: addresses are compared as written (case
// matters), and a line naming the commit name as well is keyed by the
// formatted "Name <address>".
type Mailmap struct {
	names, addresses map[string]string
}

var (
	mailmapComment  = regexp.MustCompile(`#.*$`)
	mailmapName     = regexp.MustCompile(`^([^<]+)<([^>]+)>$`)
	mailmapAddrAddr = regexp.MustCompile(`^<([^>]+)>\s*<([^>]+)>$`)
	mailmapNameAddr = regexp.MustCompile(`^(.+)<([^>]+)>\s*<([^>]+)>$`)
	mailmapFull     = regexp.MustCompile(`^(.+)<([^>]+)>\s*(.+)\s*<([^>]+)>$`)
)

// ParseMailmap reads a .mailmap file the way get_maintainer.pl does;
// lines of no form it knows are skipped, later lines override earlier
// ones.
func ParseMailmap(data []byte) *Mailmap {
	m := &Mailmap{names: map[string]string{}, addresses: map[string]string{}}
	for _, line := range strings.Split(string(data), "\n") {
		line = mailmapComment.ReplaceAllString(line, "")
		line = strings.TrimFunc(line, isPerlSpace)
		if line == "" {
			continue
		}
		if g := mailmapName.FindStringSubmatch(line); g != nil {
			name, addr := parseEmail(strings.TrimRightFunc(g[1], isPerlSpace) + " <" + g[2] + ">")
			m.names[addr] = name
		} else if g := mailmapAddrAddr.FindStringSubmatch(line); g != nil {
			m.addresses[g[2]] = g[1]
		} else if g := mailmapNameAddr.FindStringSubmatch(line); g != nil {
			name, addr := parseEmail(strings.TrimRightFunc(g[1], isPerlSpace) + " <" + g[2] + ">")
			m.names[g[3]] = name
			m.addresses[g[3]] = addr
		} else if g := mailmapFull.FindStringSubmatch(line); g != nil {
			name, addr := parseEmail(strings.TrimRightFunc(g[1], isPerlSpace) + " <" + g[2] + ">")
			wrongName, wrongAddr := parseEmail(strings.TrimRightFunc(g[3], isPerlSpace) + " <" + g[4] + ">")
			key := formatEmail(wrongName, wrongAddr)
			m.names[key] = name
			m.addresses[key] = addr
		}
	}
	return m
}

// isPerlSpace is Perl's \s on a character string.
func isPerlSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// mapEmail is get_maintainer.pl's mailmap_email: the canonical form of a
// formatted address, looked up by the whole "Name <address>" first, then
// by the address. A nil Mailmap maps nothing but still formats.
func (m *Mailmap) mapEmail(email string) string {
	name, addr := parseEmail(email)
	if m == nil {
		return formatEmail(name, addr)
	}
	key := formatEmail(name, addr)
	realName, realAddr := name, addr
	_, byName := m.names[key]
	_, byAddr := m.addresses[key]
	if byName || byAddr {
		if n, ok := m.names[key]; ok {
			realName = n
		}
		if a, ok := m.addresses[key]; ok {
			realAddr = a
		}
	} else {
		if n, ok := m.names[addr]; ok {
			realName = n
		}
		if a, ok := m.addresses[addr]; ok {
			realAddr = a
		}
	}
	return formatEmail(realName, realAddr)
}
