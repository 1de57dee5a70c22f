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
		s := f.All[i]
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

// sectionIndex narrows the sections a path can match: a section whose F:
// patterns all begin with a literal first path component ("kernel/...",
// "drivers/...") and that has no N: regex can match only paths with one of
// those first components.
type sectionIndex struct {
	n     int              // len(File.All) it was built for
	byTop map[string][]int // first component -> sections, in file order
	any   []int            // sections any path may match, in file order
}

// literalPrefix returns the text every path p matches starts with, and
// whether there is one (not for a regular expression with "|", whose
// anchor binds only its first branch).
func (p *pattern) literalPrefix() (string, bool) {
	if p.literal {
		return p.raw, true
	}
	if strings.Contains(p.raw, "|") {
		return "", false
	}
	if i := strings.IndexAny(p.raw, `*?[](){}+|^$\`); i >= 0 {
		return p.raw[:i], true
	}
	return p.raw, true
}

// candidates returns the indexes of the sections that may match path, in
// file order; Sections scores only these.
func (f *File) candidates(path string) []int {
	if f.index == nil || f.index.n != len(f.All) {
		f.index = f.buildIndex()
	}
	top, _, ok := strings.Cut(path, "/")
	if !ok {
		// A top-level file: no first component to narrow by.
		all := make([]int, len(f.All))
		for i := range all {
			all[i] = i
		}
		return all
	}
	a, b := f.index.byTop[top], f.index.any
	out := make([]int, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 { // merge, keeping file order
		if len(b) == 0 || (len(a) > 0 && a[0] < b[0]) {
			out = append(out, a[0])
			a = a[1:]
		} else {
			out = append(out, b[0])
			b = b[1:]
		}
	}
	return out
}

func (f *File) buildIndex() *sectionIndex {
	ix := &sectionIndex{n: len(f.All), byTop: map[string][]int{}}
	var tops []string
	for i, s := range f.All {
		tops = tops[:0]
		anyPath := len(s.regex) > 0
		for _, p := range s.files {
			pre, ok := p.literalPrefix()
			top, _, full := strings.Cut(pre, "/")
			if !ok || !full {
				anyPath = true
				break
			}
			if !slices.Contains(tops, top) {
				tops = append(tops, top)
			}
		}
		if anyPath {
			ix.any = append(ix.any, i)
			continue
		}
		for _, top := range tops {
			ix.byTop[top] = append(ix.byTop[top], i)
		}
	}
	return ix
}
