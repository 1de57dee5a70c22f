package maintainers

import (
	"regexp"
	"strings"
)

// chiefPenguin is get_maintainer.pl's @penguin_chief entry; like the script,
// it is used as a regular expression.
var chiefPenguin = regexp.MustCompile(`Linus Torvalds <torvalds@linux-foundation.org>`)

// Recipients returns the recipients of a patch touching paths (relative to
// the top of the kernel tree), as get_maintainer.pl --no-git
// --no-git-fallback reports them: to holds the M: and R: addresses and cc the
// L: mailing lists of every matching section. Paths are taken in the order
// given, the sections of each path in the order of [File.Sections], and the
// entries of a section in file order; duplicates are removed as described in
// the package documentation.
//
// With f.Mailmap set, every address is mapped through it; with f.ReadFile
// set, the addresses written in the .yaml files among paths come last in
// to, as get_maintainer.pl adds them ("in file").
func (f *File) Recipients(paths []string) (to, cc []string) {
	sections := make([][]*Section, len(paths))
	for i, path := range paths {
		sections[i] = f.Sections(path)
	}
	return f.RecipientsOfPaths(paths, sections)
}

// RecipientsOfPaths is Recipients for paths whose sections (sections[i]
// for paths[i], as [File.Sections] returns them) are already known.
func (f *File) RecipientsOfPaths(paths []string, sections [][]*Section) (to, cc []string) {
	var inFiles []string
	for _, path := range paths {
		if f.ReadFile != nil && strings.HasSuffix(path, ".yaml") && !isMaintainersFile(path) {
			if data, err := f.ReadFile(path); err == nil {
				inFiles = append(inFiles, FileEmails(strings.ToValidUTF8(string(data), "\uFFFD"))...)
			}
		}
	}
	return collect(sections).result(f.Mailmap, inFiles)
}

// Recipient is one recipient with its role as get_maintainer.pl
// --rolestats names it: "maintainer:SECTION" (the section's S: status as a
// role: maintainer, supporter, odd fixer, orphan minder, obsolete minder),
// "reviewer:SECTION", "open list:SECTION" (or "open list" for THE REST),
// "moderated list:SECTION", "in file"; SECTION is cut to 50 characters as
// the script cuts it.
type Recipient struct {
	Address string
	Role    string
}

// RolesOfPaths is RecipientsOfPaths with each recipient's role, as
// get_maintainer.pl --no-git --no-git-fallback --rolestats prints them.
func (f *File) RolesOfPaths(paths []string, sections [][]*Section) (to, cc []Recipient) {
	var inFiles []string
	for _, path := range paths {
		if f.ReadFile != nil && strings.HasSuffix(path, ".yaml") && !isMaintainersFile(path) {
			if data, err := f.ReadFile(path); err == nil {
				inFiles = append(inFiles, FileEmails(strings.ToValidUTF8(string(data), "\uFFFD"))...)
			}
		}
	}
	return collect(sections).resultRoles(f.Mailmap, inFiles)
}

// sectionMaxLen is get_maintainer.pl's $output_section_maxlen.
const sectionMaxLen = 50

// subsystemName is get_maintainer.pl's get_subsystem_name.
func subsystemName(s *Section) string {
	name := s.Name
	if len(name) > sectionMaxLen {
		name = strings.TrimRight(name[:sectionMaxLen-3], " \t\n\r\f\v") + "..."
	}
	return name
}

// maintainerRole is get_maintainer.pl's get_maintainer_role.
func maintainerRole(s *Section) string {
	role := "unknown"
	for _, e := range s.Entries {
		if e.Tag == 'S' {
			role = e.Value
		}
	}
	role = strings.ToLower(role)
	switch role {
	case "supported":
		role = "supporter"
	case "maintained":
		role = "maintainer"
	case "odd fixes":
		role = "odd fixer"
	case "orphan":
		role = "orphan minder"
	case "obsolete":
		role = "obsolete minder"
	case "buried alive in reporters":
		role = "chief penguin"
	}
	return role + ":" + subsystemName(s)
}

// listRole is get_maintainer.pl's get_list_role, with its ":" prefix.
func listRole(s *Section) string {
	name := subsystemName(s)
	if name == "THE REST" {
		return ""
	}
	return ":" + name
}

// isMaintainersFile is get_maintainer.pl's m@\bMAINTAINERS$@.
func isMaintainersFile(path string) bool {
	if !strings.HasSuffix(path, "MAINTAINERS") {
		return false
	}
	before := strings.TrimSuffix(path, "MAINTAINERS")
	return before == "" || !isWordByte(before[len(before)-1])
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// RecipientsOf is Recipients for paths whose sections, as [File.Sections]
// returns them, are already known: a caller that computes recipients for
// many overlapping sets of paths matches each path once.
//
// It applies no mailmap and reads no file; see [File.Recipients].
func RecipientsOf(sections ...[]*Section) (to, cc []string) {
	return collect(sections).result(nil, nil)
}

// collect pushes the M:, R: and L: entries of the sections.
func collect(sections [][]*Section) *collector {
	c := newCollector()
	for _, secs := range sections {
		for _, s := range secs {
			for _, e := range s.Entries {
				switch e.Tag {
				case 'M':
					c.pushAddresses(e.Value, maintainerRole(s))
				case 'R':
					c.pushAddresses(e.Value, "reviewer:"+subsystemName(s))
				case 'L':
					c.pushList(e.Value, listRole(s))
				}
			}
		}
	}
	return c
}

// collector accumulates addresses like get_maintainer.pl's @email_to and
// @list_to, each with its role.
type collector struct {
	to, cc         []string
	toRole, ccRole []string
	names          map[string]bool // %email_hash_name
	addrs          map[string]bool // %email_hash_address
	lists          map[string]bool // %hash_list_to
}

func newCollector() *collector {
	return &collector{
		names: map[string]bool{},
		addrs: map[string]bool{},
		lists: map[string]bool{},
	}
}

// pushAddresses adds an M: or R: value, which may hold a comma-separated
// list of addresses (push_email_addresses).
func (c *collector) pushAddresses(v, role string) {
	for _, a := range splitAddressList(v) {
		c.pushAddress(a, role)
	}
}

// pushAddress is push_email_address: an address is added unless its name or
// its address was seen before.
func (c *collector) pushAddress(v, role string) {
	name, addr := parseEmail(v)
	if addr == "" {
		return
	}
	ln, la := strings.ToLower(name), strings.ToLower(addr)
	if (name != "" && c.names[ln]) || c.addrs[la] {
		return
	}
	c.to = append(c.to, formatEmail(name, addr))
	c.toRole = append(c.toRole, role)
	if name != "" {
		c.names[ln] = true
	}
	c.addrs[la] = true
}

// pushList adds an L: value unless the list is subscribers-only or was seen
// before. The first word is the list address and the rest a comment such as
// "(moderated for non-subscribers)"; a value of the form "Team <address>"
// is kept whole, where get_maintainer.pl would report the first word.
func (c *collector) pushList(v, role string) {
	addr, extra := v, ""
	if i := strings.IndexAny(v, " \t"); i >= 0 {
		addr, extra = v[:i], strings.TrimSpace(v[i:])
	}
	key := strings.ToLower(addr)
	if !strings.Contains(addr, "@") && strings.Contains(v, "<") {
		name, a := parseEmail(v)
		if a == "" {
			return
		}
		addr, extra, key = formatEmail(name, a), "", strings.ToLower(a)
	}
	if strings.Contains(extra, "subscribers-only") || c.lists[key] {
		return
	}
	c.lists[key] = true
	c.cc = append(c.cc, addr)
	kind := "open list"
	if strings.Contains(extra, "moderated") {
		kind = "moderated list"
	}
	c.ccRole = append(c.ccRole, kind+role)
}

// result applies deduplicate_email (through mm), the removal of the
// chief penguin, the addresses found in files (inFiles, in the order
// found) and merge_email, in get_maintainer.pl's order.
func (c *collector) result(mm *Mailmap, inFiles []string) (to, cc []string) {
	rto, rcc := c.resultRoles(mm, inFiles)
	for _, r := range rto {
		to = append(to, r.Address)
	}
	for _, r := range rcc {
		cc = append(cc, r.Address)
	}
	return to, cc
}

// resultRoles is result with each recipient's role.
func (c *collector) resultRoles(mm *Mailmap, inFiles []string) (to, cc []Recipient) {
	d := deduplicator{mm: mm, byName: map[string][2]string{}, byAddr: map[string][2]string{}}
	for i, e := range c.to {
		c.to[i] = d.dedup(e)
	}
	for i, e := range c.cc {
		c.cc[i] = d.dedup(e)
	}
	var kept []Recipient
	for i, e := range c.to {
		if !chiefPenguin.MatchString(e) {
			kept = append(kept, Recipient{e, c.toRole[i]})
		}
	}
	seenInFile := map[string]bool{}
	for _, e := range inFiles {
		if seenInFile[e] {
			continue
		}
		seenInFile[e] = true
		name, addr := parseEmail(mm.mapEmail(e))
		if addr == "" {
			continue
		}
		// push_email_address(e, ""), then add_role(e, "in file"): every
		// entry of the same name or address gets the role.
		ln, la := strings.ToLower(name), strings.ToLower(addr)
		if !((name != "" && c.names[ln]) || c.addrs[la]) {
			kept = append(kept, Recipient{formatEmail(name, addr), ""})
			if name != "" {
				c.names[ln] = true
			}
			c.addrs[la] = true
		}
		for i, k := range kept {
			kn, ka := parseEmail(k.Address)
			if (name == kn || addr == ka) && !strings.Contains(k.Role, "in file") {
				if k.Role == "" {
					kept[i].Role = "in file"
				} else {
					kept[i].Role += ",in file"
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range kept {
		if seen[r.Address] {
			continue
		}
		seen[r.Address] = true
		to = append(to, r)
	}
	for i, e := range c.cc {
		if seen[e] {
			continue
		}
		seen[e] = true
		cc = append(cc, Recipient{e, c.ccRole[i]})
	}
	return to, cc
}

// deduplicator is get_maintainer.pl's deduplicate_email: the address is
// mapped through the mailmap, and one whose name or address was seen
// before is replaced by the first one seen.
type deduplicator struct {
	mm             *Mailmap
	byName, byAddr map[string][2]string
}

func (d *deduplicator) dedup(email string) string {
	name, addr := parseEmail(email)
	name, addr = parseEmail(d.mm.mapEmail(formatEmail(name, addr)))
	if p, ok := d.byName[strings.ToLower(name)]; ok && name != "" {
		name, addr = p[0], p[1]
	} else if p, ok := d.byAddr[strings.ToLower(addr)]; ok {
		name, addr = p[0], p[1]
	} else {
		d.byName[strings.ToLower(name)] = [2]string{name, addr}
		d.byAddr[strings.ToLower(addr)] = [2]string{name, addr}
	}
	return d.mm.mapEmail(formatEmail(name, addr))
}

var (
	emailNameAddr = regexp.MustCompile(`^([^<]+)<(.+@.*)>.*$`)
	emailAngle    = regexp.MustCompile(`^\s*<(.+@\S*)>.*$`)
	emailBare     = regexp.MustCompile(`^(.+@\S*).*$`)
	mustQuote     = regexp.MustCompile(`[^A-Za-z0-9_ \-]`)
)

// parseEmail is get_maintainer.pl's parse_email: it splits "Name <address>"
// and returns the name quoted if needed.
func parseEmail(s string) (name, addr string) {
	if m := emailNameAddr.FindStringSubmatch(s); m != nil {
		name, addr = m[1], m[2]
	} else if m := emailAngle.FindStringSubmatch(s); m != nil {
		addr = m[1]
	} else if m := emailBare.FindStringSubmatch(s); m != nil {
		addr = m[1]
	}
	name = escapeName(trimQuotes(strings.TrimSpace(name)))
	return name, strings.TrimSpace(addr)
}

// formatEmail is get_maintainer.pl's format_email with names enabled.
func formatEmail(name, addr string) string {
	name = escapeName(trimQuotes(strings.TrimSpace(name)))
	addr = strings.TrimSpace(addr)
	if name == "" {
		return addr
	}
	return name + " <" + addr + ">"
}

// trimQuotes removes one leading and one trailing double quote.
func trimQuotes(s string) string {
	s = strings.TrimPrefix(s, `"`)
	return strings.TrimSuffix(s, `"`)
}

// escapeName quotes a name holding characters other than ASCII word
// characters, "-" and space, escaping the double quotes not yet escaped.
func escapeName(name string) string {
	if !mustQuote.MatchString(name) {
		return name
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(name); i++ {
		if name[i] == '"' && (i == 0 || name[i-1] != '\\') {
			b.WriteByte('\\')
		}
		b.WriteByte(name[i])
	}
	b.WriteByte('"')
	return b.String()
}

// splitAddressList splits v at commas outside quotes, angle brackets and
// parentheses when every part holds an address, approximating
// get_maintainer.pl's RFC 822 list validation; otherwise v is one address
// (as in "Enrico Weigelt, metux IT consult <info@metux.net>").
func splitAddressList(v string) []string {
	var parts []string
	depthAngle, depthParen, inQuote, start := 0, 0, false, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '<':
			depthAngle++
		case c == '>':
			depthAngle--
		case c == '(':
			depthParen++
		case c == ')':
			depthParen--
		case c == ',' && depthAngle == 0 && depthParen == 0:
			parts = append(parts, v[start:i])
			start = i + 1
		}
	}
	parts = append(parts, v[start:])
	if len(parts) == 1 {
		return parts
	}
	var out []string
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue // RFC 822 allows null list items.
		}
		if !strings.Contains(p, "@") {
			return []string{v}
		}
		out = append(out, p)
	}
	return out
}
