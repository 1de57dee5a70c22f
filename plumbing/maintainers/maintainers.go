package maintainers

import (
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
	"unsafe"
)

// File is a parsed MAINTAINERS file.
type File struct {
	// All holds the sections in file order.
	All []*Section

	// IsDir, when set, reports whether the F: or X: pattern name (as
	// written, without a trailing slash and without "*", "?" or ".")
	// names a directory of the source tree. get_maintainer.pl makes this
	// test with the file system; see the package documentation for what
	// happens when IsDir is nil.
	IsDir func(name string) bool

	// Mailmap, when set, is the tree's .mailmap: get_maintainer.pl maps
	// every address through it (its default, --mailmap).
	Mailmap *Mailmap

	// ReadFile, when set, reads a file of the source tree by its path
	// relative to the top. Recipients then adds, as get_maintainer.pl
	// does, the addresses written in the .yaml files it is given (see
	// FileEmails); a file that cannot be read adds none.
	ReadFile func(name string) ([]byte, error)

	index *sectionIndex // built by Sections on first use (by ParseLazy)
	lazy  *lazySections // the sections of a File from ParseLazy
}

// Section is one subsystem entry of a MAINTAINERS file.
type Section struct {
	// Name is the section's title line, e.g. "SCHEDULER".
	Name string
	// Line is the 1-based line number of Name.
	Line int

	// Maintainers, Reviewers and Lists hold the M:, R: and L: values as
	// written, e.g. "Ingo Molnar <mingo@redhat.com>" or
	// "linux-arm-kernel@lists.infradead.org (moderated for non-subscribers)".
	Maintainers, Reviewers, Lists []string
	// Status is the S: value, e.g. "Maintained".
	Status string
	// Files and Excludes hold the F: and X: patterns as written.
	Files, Excludes []string
	// Regex holds the N: regular expressions as written.
	Regex []string
	// Keywords holds the K: regular expressions as written. They are
	// matched by get_maintainer.pl against patch contents, never against
	// paths, so they play no part in Sections or Recipients.
	Keywords []string
	// Trees, Web and Bugs hold the T:, W: and B: values.
	Trees, Web, Bugs []string

	// Entries holds every entry of the section, including the ones with
	// no dedicated field (C:, P:, Q:, ...), in file order.
	Entries []Entry

	files, excludes []*pattern
	regex           []*nameRegex
}

// nameRegex is an N: regex, compiled on first use: most never run, as a
// path that lacks a literal every match contains cannot match.
type nameRegex struct {
	expr    string // the regex, /x white space and comments removed
	literal string // a string every match contains ("" if none found)
	re      *regexp.Regexp
	err     error
}

func newNameRegex(v string) (*nameRegex, error) {
	expr := stripExtended(v)
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, err // the *syntax.Error regexp.Compile would give
	}
	return &nameRegex{expr: expr, literal: requiredLiteral(tree)}, nil
}

// requiredLiteral returns the longest case-sensitive literal that every
// match of re contains: re itself, or a literal factor of a concatenation.
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return string(re.Rune)
		}
	case syntax.OpCapture:
		return requiredLiteral(re.Sub[0])
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}

// MatchString reports whether the regex matches s.
func (n *nameRegex) MatchString(s string) bool {
	if !strings.Contains(s, n.literal) {
		return false
	}
	if n.re == nil && n.err == nil {
		n.re, n.err = regexp.Compile(n.expr)
	}
	return n.err == nil && n.re.MatchString(s)
}

// Entry is one "T: value" line of a section.
type Entry struct {
	Tag   byte   // 'M', 'R', 'L', 'S', 'F', 'X', 'N', 'K', ...
	Value string // value with surrounding white space removed
	Line  int    // 1-based line number
}

// isTagLine reports whether line is an entry line the way get_maintainer.pl
// sees one (/^([A-Z]):\s*(.*)/): an upper-case letter and a colon.
func isTagLine(line string) bool {
	return len(line) >= 2 && line[0] >= 'A' && line[0] <= 'Z' && line[1] == ':'
}

// Parse reads a MAINTAINERS file.
//
// As in get_maintainer.pl, blank lines and lines starting with "#" are
// ignored, an entry line is an upper-case letter followed by ":", and any
// other line starts a new section and is its name; lines not followed by an
// entry (such as the introduction of the kernel's MAINTAINERS) are ignored.
// Errors, which say the line number, are returned for entries before any
// section name and for F:, X: and N: values that are not valid patterns.
func Parse(r io.Reader) (*File, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading MAINTAINERS: %w", err)
	}
	return ParseBytes(b)
}

// ParseBytes is Parse of the file's content.
func ParseBytes(b []byte) (*File, error) {
	f := &File{}
	err := scan(string(b), nil, func(sp span) error {
		s, err := sp.parse()
		f.All = append(f.All, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ParseLazy reads a MAINTAINERS file for matching a few paths, as kpatch
// gen does (the kernel's has 2,800 sections and 20,000 entries): it finds
// the sections and indexes them by the first path component of their F:
// patterns, and checks and reports what Parse does, but parses a
// section's entries only when Sections first considers the section for a
// path. The File's All stays nil; Sections and Recipients give what they
// give for the File Parse returns.
//
// The File keeps b, not a copy (the kernel's MAINTAINERS is 800 KB): b
// must not be changed afterwards.
func ParseLazy(b []byte) (*File, error) {
	var text string
	if len(b) > 0 {
		text = unsafe.String(&b[0], len(b))
	}
	// Sized once: sections are mostly apart by a blank line, and
	// growing these lists cost more than filling them.
	blank, files := countBlankAndF(text)
	f := &File{lazy: &lazySections{spans: make([]span, 0, blank+1)}}
	ib := newIndexBuilder()
	ib.ix.prefixes = make([]filedPrefix, 0, files+1)
	check := func(tag byte, v string, lineno int) error {
		switch tag {
		case 'F', 'X':
			if indexSpecial(v, false) >= 0 { // only a regular expression can fail to compile
				if _, err := compilePattern(v); err != nil {
					return fmt.Errorf("line %d: %c: %q: %w", lineno, tag, v, err)
				}
			}
			if tag == 'F' {
				ib.file(v)
			}
		case 'N':
			if _, err := newNameRegex(v); err != nil {
				return fmt.Errorf("line %d: N: %q: %w", lineno, v, err)
			}
			ib.regex()
		}
		return nil
	}
	err := scan(text, check, func(sp span) error {
		ib.done(len(f.lazy.spans))
		f.lazy.spans = append(f.lazy.spans, sp)
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.lazy.parsed = make([]*Section, len(f.lazy.spans))
	ib.ix.n = len(f.lazy.spans)
	f.index = ib.ix
	return f, nil
}

// countBlankAndF returns strings.Count(text, "\n\n") and
// strings.Count(text, "\nF:") in one pass over the lines (each of those
// looks at every newline of MAINTAINERS' 25,000 again).
func countBlankAndF(text string) (blank, files int) {
	for i := strings.IndexByte(text, '\n'); i >= 0; {
		rest := text[i+1:]
		if len(rest) > 0 && rest[0] == '\n' {
			blank++
		} else if len(rest) > 1 && rest[0] == 'F' && rest[1] == ':' {
			files++
		}
		j := strings.IndexByte(rest, '\n')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return blank, files
}

// lazySections are the sections of a File from ParseLazy, each parsed on
// first use.
type lazySections struct {
	spans  []span
	parsed []*Section // nil until parsed
}

// span is one section as scan finds it: its name and the text of its
// entries, blank and comment lines between them included.
type span struct {
	name     string
	line     int    // the 1-based line of name
	body     string // whole lines, the last perhaps without its newline
	bodyLine int    // the 1-based line body starts at
}

// scan reads text line by line as get_maintainer.pl does (see Parse) and
// calls section for every section, in file order; check, when set, is
// called for every entry first. An entry before any section name is an
// error.
func scan(text string, check func(tag byte, value string, line int) error, section func(span) error) error {
	var (
		cur      *span
		name     string
		nameLine int
	)
	rest, off := text, 0
	flush := func(end int) error {
		if cur == nil {
			return nil
		}
		sp := *cur
		sp.body = text[len(text)-len(sp.body) : end]
		cur = nil
		return section(sp)
	}
	for lineno := 1; rest != ""; lineno++ {
		line, start := rest, off
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
			off += i + 1
		} else {
			rest, off = "", len(text)
		}
		for len(line) > 0 && (line[len(line)-1] == '\r' || line[len(line)-1] == '\n') {
			line = line[:len(line)-1]
		}
		trimmed := trimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			// Ignored; does not end the current section.
		case isTagLine(line):
			if cur == nil {
				if nameLine == 0 {
					return fmt.Errorf("line %d: %s: entry before any section name", lineno, line[:1])
				}
				// body holds the text from this line on until the
				// section ends (flush cuts it there).
				cur = &span{name: name, line: nameLine, body: text[start:], bodyLine: lineno}
			}
			if check != nil {
				if err := check(line[0], strings.TrimSpace(line[2:]), lineno); err != nil {
					return err
				}
			}
		default:
			if err := flush(start); err != nil {
				return err
			}
			name, nameLine = trimmed, lineno
		}
	}
	return flush(len(text))
}

// trimSpace is strings.TrimSpace, without its call for the line that
// starts and ends with a printable ASCII character (most of MAINTAINERS).
func trimSpace(line string) string {
	if len(line) > 0 && printableASCII(line[0]) && printableASCII(line[len(line)-1]) {
		return line
	}
	return strings.TrimSpace(line)
}

func printableASCII(c byte) bool { return c > ' ' && c < 0x7f }

// parse parses the entries of the section.
func (sp span) parse() (*Section, error) {
	s := &Section{Name: sp.name, Line: sp.line}
	rest := sp.body
	for lineno := sp.bodyLine; rest != ""; lineno++ {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		line = strings.TrimRight(line, "\r\n")
		if !isTagLine(line) {
			continue // blank or a comment
		}
		if err := s.add(Entry{Tag: line[0], Value: strings.TrimSpace(line[2:]), Line: lineno}); err != nil {
			return s, fmt.Errorf("line %d: %w", lineno, err)
		}
	}
	return s, nil
}

// section returns section i, parsing it first for a File from ParseLazy.
func (f *File) section(i int) *Section {
	if f.lazy == nil {
		return f.All[i]
	}
	if s := f.lazy.parsed[i]; s != nil {
		return s
	}
	// ParseLazy checked every pattern: the section parses.
	s, _ := f.lazy.spans[i].parse()
	f.lazy.parsed[i] = s
	return s
}

// numSections returns the number of sections.
func (f *File) numSections() int {
	if f.lazy != nil {
		return len(f.lazy.spans)
	}
	return len(f.All)
}

// add records e in s and compiles its pattern, if any.
func (s *Section) add(e Entry) error {
	s.Entries = append(s.Entries, e)
	v := e.Value
	switch e.Tag {
	case 'M':
		s.Maintainers = append(s.Maintainers, v)
	case 'R':
		s.Reviewers = append(s.Reviewers, v)
	case 'L':
		s.Lists = append(s.Lists, v)
	case 'S':
		s.Status = v
	case 'F', 'X':
		p, err := compilePattern(v)
		if err != nil {
			return fmt.Errorf("%c: %q: %w", e.Tag, v, err)
		}
		if e.Tag == 'F' {
			s.Files = append(s.Files, v)
			s.files = append(s.files, p)
		} else {
			s.Excludes = append(s.Excludes, v)
			s.excludes = append(s.excludes, p)
		}
	case 'N':
		re, err := newNameRegex(v)
		if err != nil {
			return fmt.Errorf("N: %q: %w", v, err)
		}
		s.Regex = append(s.Regex, v)
		s.regex = append(s.regex, re)
	case 'K':
		s.Keywords = append(s.Keywords, v)
	case 'T':
		s.Trees = append(s.Trees, v)
	case 'W':
		s.Web = append(s.Web, v)
	case 'B':
		s.Bugs = append(s.Bugs, v)
	}
	return nil
}

// stripExtended removes the white space and "#" comments that Perl's /x
// modifier ignores outside character classes.
func stripExtended(s string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			i++
			b.WriteByte(s[i])
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			// A "]" right after "[" or "[^" is literal.
			b.WriteByte(c)
			if i+1 < len(s) && s[i+1] == '^' {
				i++
				b.WriteByte('^')
			}
			if i+1 < len(s) && s[i+1] == ']' {
				i++
				b.WriteByte(']')
			}
			continue
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
