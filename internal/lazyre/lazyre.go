// Package lazyre holds package-level regular expressions that are compiled
// on first use instead of at program start.
//
// Every kpatch process starts all of its packages, and compiling their
// regular expressions at initialisation cost each process a few
// milliseconds whether or not the command used them (verify's rules, the
// build log's patterns, KTAP's lines). A *Regexp declared with New costs
// nothing until one of its methods is called; the methods are those of
// *regexp.Regexp that kpatch uses. All, for a test, compiles every pattern
// declared so that a typo cannot wait for the rare path that uses it.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled the first time it is used. It is
// safe for concurrent use, as *regexp.Regexp is.
type Regexp struct {
	pattern string
	re      func() *regexp.Regexp
}

// declared is every Regexp New returned, for All.
var (
	mu       sync.Mutex
	declared []*Regexp
)

// New returns a Regexp for pattern, compiled (with regexp.MustCompile) on
// first use. It is meant for package-level variables.
func New(pattern string) *Regexp {
	r := &Regexp{pattern: pattern}
	r.re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
	mu.Lock()
	declared = append(declared, r)
	mu.Unlock()
	return r
}

// All compiles every pattern declared with New by the packages linked in,
// returning the first that does not compile.
func All() error {
	mu.Lock()
	list := append([]*Regexp(nil), declared...)
	mu.Unlock()
	for _, r := range list {
		if _, err := regexp.Compile(r.pattern); err != nil {
			return err
		}
	}
	return nil
}

// String returns the source text of the expression.
func (r *Regexp) String() string { return r.pattern }

// MatchString reports whether s contains a match.
func (r *Regexp) MatchString(s string) bool { return r.re().MatchString(s) }

// Match reports whether b contains a match.
func (r *Regexp) Match(b []byte) bool { return r.re().Match(b) }

// FindString returns the leftmost match in s.
func (r *Regexp) FindString(s string) string { return r.re().FindString(s) }

// FindStringIndex returns the location of the leftmost match in s.
func (r *Regexp) FindStringIndex(s string) []int { return r.re().FindStringIndex(s) }

// FindStringSubmatch returns the leftmost match in s and its submatches.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }

// FindAllString returns up to n successive matches in s (all for n < 0).
func (r *Regexp) FindAllString(s string, n int) []string { return r.re().FindAllString(s, n) }

// FindAllStringIndex returns the locations of up to n successive matches.
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.re().FindAllStringIndex(s, n)
}

// FindAllStringSubmatch returns up to n successive matches in s with their
// submatches.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}

// FindSubmatch returns the leftmost match in b and its submatches.
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.re().FindSubmatch(b) }

// FindAllSubmatch returns up to n successive matches in b with their
// submatches.
func (r *Regexp) FindAllSubmatch(b []byte, n int) [][][]byte { return r.re().FindAllSubmatch(b, n) }

// ReplaceAllString replaces the matches in src with repl, expanding $ signs.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.re().ReplaceAllString(src, repl)
}

// SubexpIndex returns the index of the named submatch, -1 if none.
func (r *Regexp) SubexpIndex(name string) int { return r.re().SubexpIndex(name) }

// FindAll returns up to n successive matches in b (all for n < 0).
func (r *Regexp) FindAll(b []byte, n int) [][]byte { return r.re().FindAll(b, n) }

// FindSubmatchIndex returns the locations of the leftmost match in b and of
// its submatches.
func (r *Regexp) FindSubmatchIndex(b []byte) []int { return r.re().FindSubmatchIndex(b) }

// FindAllSubmatchIndex returns the locations of up to n successive matches
// in b and of their submatches.
func (r *Regexp) FindAllSubmatchIndex(b []byte, n int) [][]int {
	return r.re().FindAllSubmatchIndex(b, n)
}

// FindIndex returns the location of the leftmost match in b.
func (r *Regexp) FindIndex(b []byte) []int { return r.re().FindIndex(b) }
