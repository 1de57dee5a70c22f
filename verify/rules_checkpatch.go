package verify

import (
	"regexp"
	"strings"
	"sync"
)

// The rules of checkpatch.pl that catch real bugs, run natively (without
// --checkpatch), each as checkpatch.pl finds it and with its severity and
// type, so that a run with --checkpatch reports each once.
var checkpatchRules = []Rule{
	{ID: "IS_ENABLED_CONFIG", Severity: Warning,
		Why:   "IS_ENABLED() takes a CONFIG_ symbol: IS_ENABLED(FOO) is false unless FOO is a macro defined to 1, so the code it guards may never run (checkpatch's IS_ENABLED_CONFIG)",
		check: checkIsEnabledConfig},
	{ID: "COMMIT_MESSAGE", Severity: Warning,
		Why:   "a patch without a commit description tells its reviewers and later readers of git log nothing of why (checkpatch's COMMIT_MESSAGE)",
		check: checkCommitDescription},
	{ID: "BAD_FIXES_TAG", Severity: Warning,
		Why:   "the stable scripts and b4 read Fixes: as 'Fixes: <12 hex digits> (\"<subject>\")'; another form is missed or misread, and the fix does not reach the releases it fixes (checkpatch's BAD_FIXES_TAG)",
		check: checkFixesTags},
	{ID: "TRAILER_EMAIL", Severity: Error,
		Why:   "a trailer whose person is not a name and an address git, b4 and the mail tools can read is dropped from Cc and from the record of who certified or reviewed the patch (checkpatch's BAD_SIGN_OFF 'Unrecognized email address')",
		check: checkTrailerEmails},
}

var isEnabledRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bIS_ENABLED\s*\(\s*(\w+)\s*\)`) })

// buildMacros are macros the compiler or kbuild defines for kernel code
// (DEBUG by a Makefile's ccflags): IS_ENABLED() of them is true there.
var buildMacros = map[string]bool{"__KERNEL__": true, "MODULE": true, "DEBUG": true, "__CHECKER__": true, "__GENKSYMS__": true}

// checkIsEnabledConfig reports IS_ENABLED(X) without CONFIG_ on the lines
// patches add to C files (comments included, as checkpatch.pl reads them),
// in checkpatch's words. Only when X is no macro the file defines nor one
// the build defines does it say the test is false (preempt-lazy 02's
// IS_ENABLED(PREEMPT_LAZY)); IS_ENABLED(DEBUG) or of a macro defined to 1
// works, and CONFIG_X would make it dead code.
func checkIsEnabledConfig(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if !strings.HasSuffix(f.Path, ".c") && !strings.HasSuffix(f.Path, ".h") {
				continue
			}
			for _, l := range f.Added {
				for _, m := range isEnabledRE().FindAllStringSubmatch(l.Text, -1) {
					x := m[1]
					if strings.HasPrefix(x, "CONFIG_") {
						continue
					}
					content, _ := c.s.FileAt(f.Path, p.Number)
					defined := regexp.MustCompile(`(?m)^\s*#\s*define\s+` + regexp.QuoteMeta(x) + `\b`).Match(content)
					switch {
					case buildMacros[x]:
						c.report(p, f.Path, l.N, "IS_ENABLED(%s) is normally used as IS_ENABLED(CONFIG_%s); %s is a macro the build defines, so this tests it (write it as #ifdef %s if that is meant)", x, x, x, x)
					case defined:
						c.report(p, f.Path, l.N, "IS_ENABLED(%s) is normally used as IS_ENABLED(CONFIG_%s); %s is a macro of this file, so this tests it (true when defined to 1)", x, x, x)
					default:
						c.report(p, f.Path, l.N, "IS_ENABLED(%s) is normally used as IS_ENABLED(CONFIG_%s): %s is no macro of this file, so unless a header defines it to 1 this is false", x, x, x)
					}
				}
			}
		}
	}
}

// sobLineRE is the line at which checkpatch.pl stops counting a commit
// message's lines.
var sobLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^\s*signed-off-by:`) })

// checkCommitDescription reports a patch whose commit message has fewer
// than two lines besides its subject, as checkpatch.pl counts them: the
// non-blank lines up to the first Signed-off-by, that line included (a
// sign-off alone, or followed by other trailers such as a distribution's
// "Patchset:", is no description).
func checkCommitDescription(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		n := 0
		for _, l := range strings.Split(p.Log, "\n") {
			if strings.TrimSpace(l) != "" {
				n++
			}
			if sobLineRE().MatchString(l) {
				break
			}
		}
		if n < 2 {
			c.report(p, p.MailFile, p.SubjectLine, "the patch has no commit description: say what it changes and why, below the subject")
		}
	}
}

var (
	// fixesRE is a Fixes: tag as checkpatch.pl finds one: the tag in any
	// case, with or without its colon, an abbreviated commit id and the
	// parenthesized title if any.
	fixesRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^\s*(fixes:?)\s*(?:commit\s*)?([0-9a-f]{5,40})\b(?:\s*(\(.*\)))?`)
	})
	// fixesGoodRE is its one form.
	fixesGoodRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^fixes:? [0-9a-f]{5,40} \(`) })
)

// checkFixesTags reports a Fixes: tag not written "Fixes: <12 hex digits>
// ("<subject>")", as checkpatch.pl does (it compares the title with git's
// only when it can read the commit, which verify does not).
func checkFixesTags(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		count := map[string]int{}
		for _, l := range strings.Split(p.Log, "\n") {
			count[l]++
			m := fixesRE().FindStringSubmatch(l)
			if m == nil {
				continue
			}
			tag, id, title := m[1], m[2], m[3]
			quoted := len(title) >= 4 && strings.HasPrefix(title, `("`) && strings.HasSuffix(title, `")`)
			if tag == "Fixes:" && fixesGoodRE().MatchString(l) && len(id) == 12 && strings.ToLower(id) == id && quoted {
				continue
			}
			want := "<subject of " + id + ">"
			if quoted {
				want = title[2 : len(title)-2]
			} else if title != "" {
				want = title[1 : len(title)-1]
			}
			short := strings.ToLower(id)
			if len(short) > 12 {
				short = short[:12]
			}
			c.report(p, p.MailFile, p.nthLine(l, count[l]), "%q: write it 'Fixes: %s (\"%s\")', with 12 hex digits of the commit and its subject in quotes", strings.TrimSpace(l), short, want)
		}
	}
}

var (
	// personTagRE is a trailer that names a person, as checkpatch.pl's
	// signature tags, at the start of a line and capitalized (a prose
	// line's "to:" is none).
	personTagRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(Signed-off-by|Co-developed-by|Acked-by|Tested-by|Reviewed-by|Reported-by|Suggested-by|Reported-and-tested-by|To|Cc|CC):(.*)$`)
	})
	// The forms checkpatch.pl's parse_email recognizes: "Name <a@b>",
	// "<a@b>", or an address with no name before it.
	emailBracketRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*)<(\S+@\S+)>(.*)$`) })
	emailAnyRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\S+@\S+)(.*)$`) })
	emailAngleRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<[^>]+>$`) })
)

// checkTrailerEmails reports a trailer of the trailer block (the commit
// message's last paragraph) that names a person whose e-mail address
// checkpatch.pl's parse_email cannot find: no address, a name with an
// address not in <>, a "<" without ">".
func checkTrailerEmails(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		lines := strings.Split(strings.TrimRight(p.Log, "\n"), "\n")
		start := len(lines)
		for start > 0 && strings.TrimSpace(lines[start-1]) != "" {
			start--
		}
		count := map[string]int{}
		for _, l := range lines[:start] {
			count[l]++
		}
		for _, l := range lines[start:] {
			count[l]++
			m := personTagRE().FindStringSubmatch(l)
			if m == nil || recognizedEmail(m[2]) {
				continue
			}
			c.report(p, p.MailFile, p.nthLine(l, count[l]), "%q: no e-mail address git and b4 can read: write %s: Name <address>", strings.TrimSpace(l), m[1])
		}
	}
}

// recognizedEmail reports whether checkpatch.pl's parse_email finds an
// address in s: "Name <a@b>" or "<a@b>" with anything after it, or an
// address with no name before it ("Joe joe@x.org" and "Joe <joe@x.org"
// have none).
func recognizedEmail(s string) bool {
	if emailBracketRE().MatchString(s) {
		return true
	}
	loc := emailAnyRE().FindStringSubmatchIndex(s)
	if loc == nil {
		return false
	}
	name := strings.Trim(strings.TrimSpace(s[:loc[2]]), `"`)
	return name == "" || emailAngleRE().MatchString(s[loc[2]:loc[3]])
}
