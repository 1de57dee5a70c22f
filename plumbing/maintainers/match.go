package maintainers

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

// pattern is a compiled F: or X: value.
type pattern struct {
	raw     string
	literal bool           // no regular-expression syntax: match by prefix
	glob    bool           // only "*" and "?" besides literal text: match as a glob
	re      *regexp.Regexp // "^" + translated pattern, nil when literal
	dirRe   *regexp.Regexp // re followed by "/", for plain patterns
	dir     bool           // raw ends in "/"
	slashes int            // number of "/" in raw
	depth   int            // get_maintainer.pl's $value_pd
}

// compilePattern translates a MAINTAINERS file pattern the way
// get_maintainer.pl does: "." is escaped, "*" becomes ".*" and "?" becomes
// ".", and everything else keeps its regular-expression meaning.
func compilePattern(raw string) (*pattern, error) {
	if !strings.ContainsAny(raw, `*?[](){}+|^$\`) {
		// Most patterns are plain paths: "." is the only character the
		// translation touches, so a prefix test is the same match and
		// saves compiling thousands of regular expressions.
		p := &pattern{raw: raw, literal: true, dir: strings.HasSuffix(raw, "/"), slashes: strings.Count(raw, "/")}
		p.depth = p.slashes
		if !p.dir {
			p.depth++
		}
		return p, nil
	}
	if !strings.ContainsAny(raw, `[](){}+|^$\`) {
		// "*" and "?" only: the same match as the regular expression,
		// without compiling one.
		p := &pattern{raw: raw, glob: true, dir: strings.HasSuffix(raw, "/"), slashes: strings.Count(raw, "/")}
		p.depth = p.slashes
		if !p.dir {
			p.depth++
		}
		if strings.HasPrefix(raw, "*") {
			p.depth = -1
		}
		return p, nil
	}
	var b strings.Builder
	for _, c := range raw {
		switch c {
		case '.':
			b.WriteString(`\.`)
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteRune(c)
		}
	}
	re, err := regexp.Compile("^" + b.String())
	if err != nil {
		return nil, err
	}
	p := &pattern{
		raw:     raw,
		re:      re,
		dir:     strings.HasSuffix(raw, "/"),
		slashes: strings.Count(raw, "/"),
	}
	p.depth = p.slashes
	if !p.dir {
		p.depth++
	}
	if strings.HasPrefix(raw, "*") {
		p.depth = -1
	}
	// get_maintainer.pl tests the translated pattern with -d, so only a
	// pattern without ".", "*" and "?" can name a directory.
	if !p.dir && raw != "" && !strings.ContainsAny(raw, ".*?") {
		if p.dirRe, err = regexp.Compile("^" + b.String() + "/"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// match reports whether p matches path, like get_maintainer.pl's
// file_match_pattern.
func (f *File) match(p *pattern, path string) bool {
	if p.literal {
		if !strings.HasPrefix(path, p.raw) {
			return false
		}
		if p.dir {
			return true
		}
		if p.raw != "" && !strings.Contains(p.raw, ".") && f.isDir(p, path) {
			return strings.HasPrefix(path, p.raw+"/")
		}
		return strings.Count(path, "/") == p.slashes
	}
	if p.glob {
		if !globPrefix(p.raw, path) {
			return false
		}
		if p.dir {
			return true
		}
		return strings.Count(path, "/") == p.slashes
	}
	if !p.re.MatchString(path) {
		return false
	}
	if p.dir {
		return true
	}
	if p.dirRe != nil && f.isDir(p, path) {
		return p.dirRe.MatchString(path)
	}
	return strings.Count(path, "/") == p.slashes
}

// isDir reports whether the plain pattern p names a directory.
func (f *File) isDir(p *pattern, path string) bool {
	if f.IsDir != nil && f.IsDir(p.raw) {
		return true
	}
	return strings.HasPrefix(path, p.raw+"/")
}

// score returns whether s matches path and, if so, get_maintainer.pl's
// ranking of the match: the depth of the last matching F: pattern, or 0 if
// an N: regex matched after it.
func (f *File) score(s *Section, path string) (int, bool) {
	for _, p := range s.excludes {
		if f.match(p, path) {
			return 0, false
		}
	}
	score, ok := 0, false
	fi, ni := 0, 0
	for _, e := range s.Entries {
		switch e.Tag {
		case 'F':
			if p := s.files[fi]; f.match(p, path) {
				score, ok = p.depth, true
			}
			fi++
		case 'N':
			if s.regex[ni].MatchString(path) {
				score, ok = 0, true
			}
			ni++
		}
	}
	return score, ok
}

// Sections returns the sections matching path, a path relative to the top
// of the kernel tree such as "kernel/fork.c", most specific first (see the
// package documentation).
func (f *File) Sections(path string) []*Section {
	type hit struct {
		s     *Section
		score int
	}
	var hits []hit
	for _, i := range f.candidates(path) {
		s := f.section(i)
		if score, ok := f.score(s, path); ok {
			hits = append(hits, hit{s, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := make([]*Section, len(hits))
	for i, h := range hits {
		out[i] = h.s
	}
	return out
}

// globPrefix reports whether a prefix of s matches pattern, where "*" is
// any sequence of bytes ("/" included) and "?" any one byte: the regular
// expression "^" + pattern with "*" as ".*" and "?" as ".".
func globPrefix(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for {
		if p == len(pattern) {
			return true // the rest of s is outside the prefix
		}
		switch {
		case pattern[p] == '*':
			star, mark = p, i
			p++
		case i < len(s) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case star >= 0 && mark < len(s):
			mark++
			p, i = star+1, mark
		default:
			return false
		}
	}
}

// sectionIndex narrows the sections a path can match by the literal text
// every match of an F: pattern starts with (literalPrefix): a section
// without N: regexes whose F: patterns all have one ("kernel/fork.c",
// "arch/x86/", "include/linux/sched") can match only a path that starts
// with one of them, so Sections looks up the prefixes of a path and
// scores only the sections filed under them, and the few that any path
// may match. (A plain list: kpatch gen asks about a few paths, and
// comparing each with 8,000 prefixes costs less than hashing them.)
type sectionIndex struct {
	n        int           // the number of sections it was built for
	prefixes []filedPrefix // in file order
	any      []int         // sections any path may match, in file order
}

// filedPrefix is a literal prefix and the section filed under it.
type filedPrefix struct {
	prefix  string
	section int
}

// literalPrefix returns the text every path p matches starts with, and
// whether there is one (not for a regular expression with "|", whose
// anchor binds only its first branch).
func (p *pattern) literalPrefix() (string, bool) {
	return literalPrefix(p.raw)
}

// literalPrefix is pattern.literalPrefix of the F: or X: value raw. The
// character before a "{" may be repeated zero times, so it is left out.
func literalPrefix(raw string) (string, bool) {
	if strings.Contains(raw, "|") {
		return "", false
	}
	if i := indexSpecial(raw, true); i >= 0 {
		if raw[i] == '{' && i > 0 {
			i--
		}
		return raw[:i], true
	}
	return raw, true
}

// special marks the characters of an F: or X: value that are not literal
// text: 1 for "*" and "?" (a glob), 2 for the others of a regular
// expression.
var special = func() (t [256]byte) {
	t['*'], t['?'] = 1, 1
	for _, c := range []byte(`[](){}+|^$\`) {
		t[c] = 2
	}
	return t
}()

// indexSpecial returns the index of the first character of raw that is
// not literal text, or -1; globs says whether "*" and "?" count.
func indexSpecial(raw string, globs bool) int {
	for i := 0; i < len(raw); i++ {
		if k := special[raw[i]]; k == 2 || k == 1 && globs {
			return i
		}
	}
	return -1
}

// indexKey returns the literal prefix the index files a section with the
// F: value raw under, or false when any path may match it.
func indexKey(raw string) (string, bool) {
	pre, ok := literalPrefix(raw)
	return pre, ok && pre != ""
}

// indexBuilder builds a sectionIndex one section at a time.
type indexBuilder struct {
	ix      *sectionIndex
	keys    []string
	anyPath bool
}

func newIndexBuilder() *indexBuilder {
	return &indexBuilder{ix: &sectionIndex{}}
}

// file notes an F: value of the current section.
func (b *indexBuilder) file(raw string) {
	if b.anyPath {
		return
	}
	key, ok := indexKey(raw)
	if !ok {
		b.anyPath = true
	} else if !slices.Contains(b.keys, key) {
		b.keys = append(b.keys, key)
	}
}

// regex notes an N: regex of the current section.
func (b *indexBuilder) regex() { b.anyPath = true }

// done files the current section, number i, and starts the next.
func (b *indexBuilder) done(i int) {
	if b.anyPath {
		b.ix.any = append(b.ix.any, i)
	} else {
		for _, k := range b.keys {
			b.ix.prefixes = append(b.ix.prefixes, filedPrefix{k, i})
		}
	}
	b.ix.n = i + 1
	b.keys, b.anyPath = b.keys[:0], false
}

// candidates returns the indexes of the sections that may match path, in
// file order; Sections scores only these.
func (f *File) candidates(path string) []int {
	if f.index == nil || f.index.n != f.numSections() {
		f.index = f.buildIndex()
	}
	var filed []int
	for _, p := range f.index.prefixes {
		if strings.HasPrefix(path, p.prefix) && (len(filed) == 0 || filed[len(filed)-1] != p.section) {
			filed = append(filed, p.section)
		}
	}
	return mergeSorted([][]int{f.index.any, filed})
}

// mergeSorted merges ascending lists into one, without duplicates.
func mergeSorted(lists [][]int) []int {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make([]int, 0, n)
	for {
		best := -1
		for k, l := range lists {
			if len(l) > 0 && (best < 0 || l[0] < lists[best][0]) {
				best = k
			}
		}
		if best < 0 {
			return out
		}
		v := lists[best][0]
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
		lists[best] = lists[best][1:]
	}
}

func (f *File) buildIndex() *sectionIndex {
	b := newIndexBuilder()
	for i, s := range f.All {
		if len(s.regex) > 0 {
			b.regex()
		}
		for _, raw := range s.Files {
			b.file(raw)
		}
		b.done(i)
	}
	b.ix.n = len(f.All)
	return b.ix
}
