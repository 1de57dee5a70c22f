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

	// For a Mailmap from ParseMailmapLazy: the file, and what its lines
	// that contain an address say, by address.
	text   string
	byAddr map[string]*Mailmap
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
	m := newMailmap()
	for _, line := range strings.Split(string(data), "\n") {
		m.addLine(line)
	}
	return m
}

// ParseMailmapLazy is ParseMailmap for mapping a few addresses, as kpatch
// gen does (the kernel's .mailmap has 700 lines, each matched against up
// to five regular expressions): a line is parsed when an address it
// contains is first mapped. Every line that can map an address contains
// it (the keys of the lines' entries are addresses written in them, or
// "Name <address>" with such an address), so mapping through it gives
// what mapping through ParseMailmap's gives.
// A lazy Mailmap is not safe for concurrent use.
func ParseMailmapLazy(data []byte) *Mailmap {
	return &Mailmap{text: string(data), byAddr: map[string]*Mailmap{}}
}

func newMailmap() *Mailmap {
	return &Mailmap{names: map[string]string{}, addresses: map[string]string{}}
}

// addLine adds what one line of a .mailmap says.
func (m *Mailmap) addLine(line string) {
	line = mailmapComment.ReplaceAllString(line, "")
	line = strings.TrimFunc(line, isPerlSpace)
	if line == "" {
		return
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

// forAddress returns the entries of a lazy Mailmap that can map an
// address addr: those of the lines containing it, in file order. An
// address with "<" or ">" in it could be keyed in a line without it, so
// for one every line is read.
func (m *Mailmap) forAddress(addr string) *Mailmap {
	if strings.ContainsAny(addr, "<>") {
		addr = ""
	}
	if v, ok := m.byAddr[addr]; ok {
		return v
	}
	v := newMailmap()
	for rest := m.text; rest != ""; {
		i := strings.Index(rest, addr)
		if i < 0 {
			break
		}
		start := strings.LastIndexByte(rest[:i], '\n') + 1
		end := strings.IndexByte(rest[i:], '\n')
		if end < 0 {
			end = len(rest)
		} else {
			end += i
		}
		v.addLine(rest[start:end])
		if end == len(rest) {
			break
		}
		rest = rest[end+1:]
	}
	m.byAddr[addr] = v
	return v
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
	if m.byAddr != nil {
		m = m.forAddress(addr)
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
