package verify

import (
	"bufio"
	"bytes"
	"fmt"
	"net/mail"
	"strings"
	"sync"

	"regexp"
)

var messageRules = []Rule{
	{ID: "AUTHOR_SIGN_OFF", Severity: Error,
		Why:   "the Developer's Certificate of Origin needs the author's own Signed-off-by (submitting-patches.rst; checkpatch's NO_AUTHOR_SIGN_OFF and MISSING_SIGN_OFF)",
		check: checkAuthorSignOff},
	{ID: "SENDER_SIGN_OFF", Severity: Warning,
		Why:   "the last Signed-off-by records who handled the patch last: the one who sends it (a warning, as checkpatch's sign-off checks are)",
		check: checkSenderSignOff},
	{ID: "CO_DEVELOPED_BY", Severity: Warning,
		Why:   "every co-author certifies the DCO: Co-developed-by must be followed by that person's Signed-off-by (checkpatch's BAD_SIGN_OFF, a warning)",
		check: checkCoDevelopedBy},
	{ID: "DUPLICATE_SIGN_OFF", Severity: Warning,
		Why:   "a signature given twice says nothing more and reads as a tooling slip (checkpatch's DUPLICATE_SIGN_OFF)",
		check: checkDuplicateSignOff},
	{ID: "SPELLING", Severity: Warning,
		Why:   "misspellings in logs and comments stay in git history and grep misses them",
		check: checkSpelling},
	{ID: "REPEATED_WORD", Severity: Warning,
		Why:   "a doubled word reads as a typo and reviewers stop to point it out",
		check: checkRepeatedWords},
	{ID: "SUBJECT_PREFIX", Severity: Warning,
		Why:   "one subsystem, one prefix: shortlogs and git log --grep group patches by it",
		check: checkSubjectPrefix},
}

// person is a name and address as trailers and From lines give them.
type person struct{ name, addr string }

func parsePerson(s string) person {
	s = strings.TrimSpace(s)
	if a, err := mail.ParseAddress(s); err == nil {
		return person{normName(a.Name), strings.ToLower(a.Address)}
	}
	if i := strings.LastIndexByte(s, '<'); i >= 0 {
		return person{normName(s[:i]), strings.ToLower(strings.Trim(s[i:], "<> "))}
	}
	return person{name: normName(s)}
}

var parenthesized = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\([^)]*\)`) })

func normName(n string) string {
	n = parenthesized().ReplaceAllString(n, "")
	return strings.ToLower(strings.Join(strings.Fields(strings.Trim(n, `" `)), " "))
}

func (a person) same(b person) bool {
	if a.addr != "" && b.addr != "" {
		return a.addr == b.addr
	}
	return a.name != "" && a.name == b.name
}

// trailer is one "Key: value" trailer line of a commit message.
type trailer struct {
	key, value, text string
}

var trailerRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z][A-Za-z-]*-by|Link|Fixes|Cc|Closes):\s*(.*)$`)
})

func trailers(log string) []trailer {
	var out []trailer
	for _, l := range strings.Split(log, "\n") {
		if m := trailerRE().FindStringSubmatch(l); m != nil {
			out = append(out, trailer{m[1], m[2], l})
		}
	}
	return out
}

func checkAuthorSignOff(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		author := parsePerson(p.Author)
		found := false
		for _, t := range trailers(p.Log) {
			if strings.EqualFold(t.key, "Signed-off-by") && parsePerson(t.value).same(author) {
				found = true
			}
		}
		if !found {
			c.report(p, p.MailFile, p.line("\n---\n")+1, "no Signed-off-by from the author %s: add \"Signed-off-by: %s\"", p.Author, p.Author)
		}
	}
}

func checkSenderSignOff(c *checker) {
	if c.s.Sender == "" {
		return
	}
	sender := parsePerson(c.s.Sender)
	for _, p := range c.s.Patches {
		c.stopped()
		var last *trailer
		ts := trailers(p.Log)
		for i := range ts {
			if strings.EqualFold(ts[i].key, "Signed-off-by") {
				last = &ts[i]
			}
		}
		if last == nil || parsePerson(last.value).same(sender) {
			continue // no sign-off at all is AUTHOR_SIGN_OFF's
		}
		c.report(p, p.MailFile, p.line(last.text), "the last Signed-off-by is %s, but %s sends the patch: the sender adds their Signed-off-by last", last.value, c.s.Sender)
	}
}

func checkCoDevelopedBy(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		lines := strings.Split(p.Log, "\n")
		for i, l := range lines {
			m := trailerRE().FindStringSubmatch(l)
			if m == nil || !strings.EqualFold(m[1], "Co-developed-by") {
				continue
			}
			who := parsePerson(m[2])
			next := ""
			if i+1 < len(lines) {
				next = lines[i+1]
			}
			nm := trailerRE().FindStringSubmatch(next)
			if nm != nil && strings.EqualFold(nm[1], "Signed-off-by") && parsePerson(nm[2]).same(who) {
				continue
			}
			got := "nothing"
			if strings.TrimSpace(next) != "" {
				got = fmt.Sprintf("%q", next)
			}
			c.report(p, p.MailFile, p.line(l), "%q is followed by %s: put \"Signed-off-by: %s\" on the line right after it", l, got, m[2])
		}
	}
}

var spellingOnce sync.Map // see spellingList for the key -> map[string]string

// spellingList returns misspelling -> correction from the tree's
// scripts/spelling.txt, the list checkpatch.pl reads (nil without a tree).
// codespell's dictionary is not read: it "corrects" words the kernel uses
// (inflight, iput, reenable), and checkpatch reads it only when asked
// (--codespell).
func (s *Series) spellingList() map[string]string {
	if s.Tree == nil {
		return nil
	}
	// The list is the same for every series on one commit of a
	// repository (the generated series of one base each have their own
	// Tree); a plain directory's may change, so it is keyed by its Tree.
	key := any(s.Tree)
	if s.Tree.IsGit() {
		key = s.Tree.Dir + "@" + s.Tree.Commit.String()
	}
	if v, ok := spellingOnce.Load(key); ok {
		return v.(map[string]string)
	}
	m := map[string]string{}
	if data, err := s.Tree.ReadFile("scripts/spelling.txt"); err == nil {
		readSpelling(data, m)
	}
	spellingOnce.Store(key, m)
	return m
}

// SpellingSources says which word lists SPELLING reads for s.
func (s *Series) SpellingSources() string {
	if s.Tree != nil {
		if _, err := s.Tree.ReadFile("scripts/spelling.txt"); err == nil {
			return "the tree's scripts/spelling.txt, as checkpatch.pl reads it"
		}
	}
	return "no word list (the tree's scripts/spelling.txt: give the tree with --tree)"
}

func readSpelling(data []byte, m map[string]string) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") {
			continue
		}
		if bad, good, ok := strings.Cut(l, "||"); ok {
			m[strings.ToLower(bad)] = good
		}
	}
}

var urlRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-z]+://\S+`) })

var wordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z][A-Za-z']*`) })

// prose is a line of text a person wrote: commit message, changelog or
// comment, with where to report it.
type prose struct {
	p    *Patch
	file string
	line int
	text string
	raw  bool // the whole line as written (a message line, a line of a text file)
	subj bool // the subject
}

// proseOf returns every line of commit message, changelog and added
// comment of the series.
func (s *Series) proseOf() []prose {
	var out []prose
	for _, p := range s.Patches {
		for i, part := range []string{p.Subject, p.Log, p.Changelog} {
			for _, l := range strings.Split(part, "\n") {
				if strings.TrimSpace(l) == "" || trailerRE().MatchString(l) {
					continue
				}
				out = append(out, prose{p, p.MailFile, p.line(l), urlRE().ReplaceAllString(l, " "), true, i == 0})
			}
		}
		for _, f := range p.Files {
			whole := !isCode(f.Path) && !isMakefile(f.Path) && !strings.Contains(f.Path, "Kconfig")
			for _, cl := range commentLines(f) {
				out = append(out, prose{p, f.Path, cl.N, cl.Text, whole, false})
			}
		}
	}
	return out
}

// commentLines returns the comment text of the added lines of f: C and
// assembler comments for C files, "#" comments for Makefiles and Kconfig
// help and comments, the whole line for other files.
func commentLines(f *File) []Line {
	var out []Line
	switch {
	case strings.HasSuffix(f.Path, ".c") || strings.HasSuffix(f.Path, ".h") || strings.HasSuffix(f.Path, ".S"):
		in, prev := false, -1
		for _, l := range f.Added {
			t := l.Text
			if l.N != prev+1 { // a new run: guess from the line itself
				tt := strings.TrimSpace(t)
				in = strings.HasPrefix(tt, "*") && !strings.HasPrefix(tt, "*/")
			}
			prev = l.N
			var b strings.Builder
			for len(t) > 0 {
				if in {
					end := strings.Index(t, "*/")
					if end < 0 {
						b.WriteString(t)
						t = ""
						break
					}
					b.WriteString(t[:end] + " ")
					t, in = t[end+2:], false
					continue
				}
				i := strings.Index(t, "/*")
				j := strings.Index(t, "//")
				if j >= 0 && (i < 0 || j < i) {
					b.WriteString(t[j+2:])
					break
				}
				if i < 0 {
					break
				}
				t, in = t[i+2:], true
			}
			if s := b.String(); strings.TrimSpace(s) != "" {
				out = append(out, Line{l.N, s})
			}
		}
	case isMakefile(f.Path) || strings.Contains(f.Path, "Kconfig"):
		for _, l := range f.Added {
			if i := strings.IndexByte(l.Text, '#'); i >= 0 {
				out = append(out, Line{l.N, l.Text[i+1:]})
			} else if strings.Contains(f.Path, "Kconfig") && strings.HasPrefix(l.Text, "\t  ") {
				out = append(out, l) // help text
			}
		}
	default:
		out = append(out, f.Added...)
	}
	return out
}

func isMakefile(path string) bool {
	base := path[strings.LastIndexByte(path, '/')+1:]
	return base == "Makefile" || base == "Kbuild" || strings.HasSuffix(base, ".mk")
}

// checkSpelling reports the words of the series' prose that the tree's
// scripts/spelling.txt or the series' own list (verify-rules) has as
// misspelled, except in the lines a commit message pastes (pastedLine).
func checkSpelling(c *checker) {
	list := c.s.spellingList()
	for _, pr := range c.s.proseOf() {
		if pr.raw && pastedLine(pr.text) {
			continue
		}
		for _, w := range wordRE().FindAllString(pr.text, -1) {
			good, ok := c.words[strings.ToLower(w)]
			if !ok {
				good, ok = list[strings.ToLower(w)]
			}
			if ok {
				c.report(pr.p, pr.file, pr.line, "%q may be misspelled: perhaps %q", w, matchCase(good, w))
			}
		}
	}
}

func matchCase(good, like string) string {
	if like != "" && like[0] >= 'A' && like[0] <= 'Z' && good != "" {
		return strings.ToUpper(good[:1]) + good[1:]
	}
	return good
}

// checkRepeatedWords reports a word written twice, as checkpatch.pl's
// REPEATED_WORD finds it: words of two or more lower-case letters (one
// capital first), separated by one space, not glued to what comes before
// or after; "long long" and the struct/union/enum tags are code, and a
// word made of hexadecimal digits ("fa fa", a KASAN shadow dump) is a
// number unless it is one of checkpatch's words (add, added, bad, be).
// Lines of ls -l output are left out, and so are the subject (checkpatch
// reads it as a header) and the lines a commit message pastes rather than
// writes: indented by a tab or four spaces (a log, a dump, a diagram),
// quoted with ">", or dmesg's "[  1.234]".
func checkRepeatedWords(c *checker) {
	for _, pr := range c.s.proseOf() {
		if pr.subj || pr.raw && pastedLine(pr.text) {
			continue // checkpatch reads the subject as a header
		}
		for _, w := range repeatedWords(pr.text) {
			c.report(pr.p, pr.file, pr.line, "%q: the word %q is repeated: remove one", strings.TrimSpace(pr.text), w)
		}
	}
}

var (
	repeatedWordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[A-Z]?[a-z]{2,}\b`) })
	lsModeRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[bcCdDlMnpPs?-][rwxsStT-]{9}`) })
	hexWordRE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^[0-9a-f]{2,}$`) })
	dmesgRE        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[\s*\d+\.\d+\]`) })
)

// hexWordsChecked are the words of hexadecimal digits checkpatch.pl still
// checks for repeats.
var hexWordsChecked = map[string]bool{"add": true, "added": true, "bad": true, "be": true}

// repeatedWords returns the words of line that checkpatch.pl's
// REPEATED_WORD finds repeated.
func repeatedWords(line string) []string {
	if lsModeRE().MatchString(line) {
		return nil
	}
	var out []string
	words := repeatedWordRE().FindAllStringIndex(line, -1)
	for i := 0; i+1 < len(words); i++ {
		a, b := words[i], words[i+1]
		first, second := line[a[0]:a[1]], line[b[0]:b[1]]
		if b[0] != a[1]+1 || line[a[1]] != ' ' {
			continue // not one space apart
		}
		switch first {
		case "struct", "union", "enum":
			i++ // "struct mutex mutex": the tag and its type
			continue
		case "long":
			continue
		}
		if !strings.EqualFold(first, second) {
			continue
		}
		if a[0] > 0 && !isSpace(line[a[0]-1]) {
			continue
		}
		if b[1] < len(line) && !strings.ContainsRune(" \t.,;?!", rune(line[b[1]])) {
			continue
		}
		if hexWordRE().MatchString(first) && !hexWordsChecked[strings.ToLower(first)] {
			continue
		}
		out = append(out, first)
	}
	return out
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' }

// pastedLine reports whether a line of a commit message (or of a text
// file) is pasted output rather than prose: indented by a tab or four
// spaces, quoted, or a dmesg line.
func pastedLine(l string) bool {
	return strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "    ") || strings.HasPrefix(strings.TrimSpace(l), ">") || dmesgRE().MatchString(l)
}

// subjectPrefix returns "unwind_user/deferred" of
// "unwind_user/deferred: Add ...".
func subjectPrefix(subject string) string {
	if i := strings.Index(subject, ": "); i > 0 {
		return subject[:i]
	}
	return ""
}

// mainFile returns the file a patch is mostly about: the C file with the
// most changed lines, else the file with the most.
func mainFile(p *Patch) string {
	best, bestN, bestC := "", -1, false
	for _, f := range p.Files {
		n := len(f.Added) + len(f.Removed)
		isC := strings.HasSuffix(f.Path, ".c")
		if isC && !bestC || isC == bestC && n > bestN {
			best, bestN, bestC = f.Path, n, isC
		}
	}
	return best
}

// checkSubjectPrefix reports, among the patches mostly about one file,
// the prefixes that differ from the one most of them use. A subject
// without a prefix (hh-block's "mq-deadline serialize request
// dispatching"-style subjects of saved mails) says nothing about the
// subsystem: it is left out of the comparison.
func checkSubjectPrefix(c *checker) {
	byFile := map[string][]*Patch{}
	var files []string
	for _, p := range c.s.Patches {
		c.stopped()
		if subjectPrefix(p.Subject) == "" {
			continue
		}
		f := mainFile(p)
		if byFile[f] == nil {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], p)
	}
	for _, f := range files {
		count := map[string][]int{}
		var order []string
		for _, p := range byFile[f] {
			pre := subjectPrefix(p.Subject)
			if count[pre] == nil {
				order = append(order, pre)
			}
			count[pre] = append(count[pre], p.Number)
		}
		if len(order) < 2 {
			continue
		}
		major := order[0]
		for _, pre := range order {
			if len(count[pre]) > len(count[major]) {
				major = pre
			}
		}
		for _, p := range byFile[f] {
			if pre := subjectPrefix(p.Subject); !nestedPrefix(pre, major) {
				c.report(p, p.MailFile, p.SubjectLine, "subject prefix %q differs from %q (patches %s) for the same code, %s: use one prefix for one subsystem",
					pre+":", major+":", joinInts(count[major]), f)
			}
		}
	}
}

// nestedPrefix reports whether one prefix refines the other by
// components: "unwind_user/x86" and "unwind_user" are the same subsystem,
// "unwind deferred" and "unwind_user/deferred" are not.
func nestedPrefix(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	if len(as) > len(bs) {
		as, bs = bs, as
	}
	for i := range as {
		if as[i] != bs[i] {
			return false
		}
	}
	return true
}

func joinInts(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, ", ")
}

// signatureRE matches the lines checkpatch.pl takes as signatures.
var signatureRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*(signed-off-by|co-developed-by|acked-by|tested-by|reviewed-by|reported-by|suggested-by|to|cc):`)
})

// checkDuplicateSignOff reports a signature line that repeats an earlier
// one of the same commit message, compared as checkpatch.pl does: case and
// white space aside.
func checkDuplicateSignOff(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		seen := map[string]bool{}
		count := map[string]int{} // occurrences of each line so far
		for _, l := range strings.Split(p.Log, "\n") {
			count[l]++
			if !signatureRE().MatchString(l) {
				continue
			}
			key := strings.ToLower(strings.Join(strings.Fields(l), ""))
			if seen[key] {
				c.report(p, p.MailFile, p.nthLine(l, count[l]), "%q is given twice: keep one", strings.TrimSpace(l))
				continue
			}
			seen[key] = true
		}
	}
}
