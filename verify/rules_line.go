package verify

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

var lineRules = []Rule{
	{ID: "PATCH_APPLY", Severity: Error,
		Why:   "git am refuses a patch that does not apply to the base (a hunk whose context is not there, a file created that exists or changed that does not, an invalid path): the maintainer cannot take it",
		check: checkPatchApply},
	{ID: "PATCH_ALREADY_APPLIED", Severity: Warning,
		Why:   "git am stops at a patch the base already has (git apply -R --check takes it): it is dropped from the series, or the series was made on another base",
		check: checkPatchApply},
	{ID: "LONG_LINE", Severity: Warning,
		Why:   "coding-style.rst: lines past 100 columns are hard to read and to review in mail",
		check: checkLongLines},
	{ID: "TRAILING_WHITESPACE", Severity: Error,
		Why:   "git am --whitespace=error rejects it and maintainers' scripts flag it",
		check: checkTrailingWhitespace},
	{ID: "SPDX_LICENSE_TAG", Severity: Warning,
		Why:   "license-rules.rst: every new file starts with its SPDX-License-Identifier on line 1",
		check: checkSPDX},
	{ID: "MAKEFILE_LEADING_SPACE", Severity: Warning,
		Why:   "Kbuild files start their lines at column 0 (recipes with a tab): a stray leading space is a slip reviewers ask to fix",
		check: checkMakefileSpace},
}

// columns returns the width of a line with tabs at every 8 columns.
func columns(s string) int {
	n := 0
	for _, r := range s {
		if r == '\t' {
			n += 8 - n%8
		} else {
			n++
		}
	}
	return n
}

// isC reports whether path is C the C rules read: a .c or .h file, but
// not a linker script's header (*.lds.h).
func isC(path string) bool {
	return strings.HasSuffix(path, ".c") || strings.HasSuffix(path, ".h") && !strings.HasSuffix(path, ".lds.h")
}

func isCode(path string) bool {
	return strings.HasSuffix(path, ".c") || strings.HasSuffix(path, ".h") || strings.HasSuffix(path, ".S")
}

// checkLongLines reports the added lines over 100 columns of the files
// checkpatch.pl measures (.c, .h, .rs, .s, .S, .sh, .dts, .dtsi), with its
// exemptions (longLineExempt): its LONG_LINE, LONG_LINE_COMMENT and
// LONG_LINE_STRING in one.
func checkLongLines(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if !longLineFileRE().MatchString(f.Path) {
				continue
			}
			for _, l := range f.Added {
				n := columns(l.Text)
				if n <= 100 || longLineExempt(l.Text) {
					continue
				}
				c.report(p, f.Path, l.N, "line is %d columns, over 100: break it (one parameter per line, or a shorter type name)", n)
			}
		}
	}
}

var (
	// longLineFileRE is the files checkpatch.pl measures lines of.
	longLineFileRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.(h|c|rs|s|S|sh|dtsi|dts)$`) })
	// logFunctionsRE is checkpatch.pl's $logFunctions.
	logFunctionsRE = `(?:printk(?:_ratelimited|_once|_deferred_once|_deferred|)|(?:[a-z0-9]+_){1,2}(?:printk|emerg|alert|crit|err|warning|warn|notice|info|debug|dbg|vdbg|devel|cont|WARN)(?:_ratelimited|_once|)|TP_printk|WARN(?:_RATELIMIT|_ONCE|)|panic|MODULE_[A-Z_]+|seq_vprintf|seq_printf|seq_puts)`
	// stringRE is checkpatch.pl's $String on a line whose strings are
	// blanked (see blankStrings).
	stringRE        = `(?:\b[Lu])?"[X\t]*"`
	logEndsInString = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*` + logFunctionsRE + `\s*\(\s*(?:(?:KERN_\S+\s*|[^"]*))?(` + stringRE + `\s*(?:|,|\)\s*;)\s*)$`)
	})
	onlyString   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*` + stringRE + `\s*(?:\s*|,|\)\s*;)\s*$`) })
	defineString = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*#\s*define\s+\w+\s+` + stringRE + `$`) })
	specialLong  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bEFI_GUID\s*\(|^\s*(?:\w+)?\s*DEFINE_PER_CPU`) })
	longURLRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b[a-z][\w.+\-]*://\S+`) })
)

// longLineExempt reports whether checkpatch.pl lets a long line be: a
// logging function's call (or a MODULE_* line) that ends in a string
// starting within 100 columns, a line of a string alone, a #define of a
// string, an EFI_GUID or DEFINE_PER_CPU line, a line with a URL.
func longLineExempt(text string) bool {
	line := blankStrings(text)
	if m := logEndsInString().FindStringSubmatchIndex(line); m != nil && columns(text[:m[2]]) <= 100 {
		return true
	}
	return onlyString().MatchString(line) || defineString().MatchString(line) || specialLong().MatchString(line) || longURLRE().MatchString(text)
}

// blankStrings returns line with the characters of its string literals
// replaced by X, as checkpatch.pl's sanitized line has them (the length
// kept, the quotes left).
func blankStrings(line string) string {
	b := []byte(line)
	in := false
	for i := 0; i < len(b); i++ {
		switch {
		case !in && b[i] == '\'' && i+2 < len(b): // a character constant: '"' is no string
			if b[i+1] == '\\' && i+3 < len(b) {
				i += 3
			} else {
				i += 2
			}
		case b[i] == '"':
			in = !in
		case in && b[i] == '\\' && i+1 < len(b):
			b[i], b[i+1] = 'X', 'X'
			i++
		case in && b[i] != '\t':
			b[i] = 'X'
		}
	}
	return string(b)
}

func checkTrailingWhitespace(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			for _, l := range f.Added {
				if t := strings.TrimRight(l.Text, " \t"); t != l.Text {
					c.report(p, f.Path, l.N, "trailing whitespace: remove it")
				}
			}
		}
	}
}

// checkSPDX checks the SPDX-License-Identifier of the files a patch
// adds line 1 of, as checkpatch.pl does: its line is 1, or 2 after a "#!"
// line, and it is written in the file's comment style ("// " in .c, .rs,
// .dts; "/* " in .h, .s, .S; "# " in scripts, .yaml and after "#!"; ".. "
// in .rst). Files of other kinds (Documentation/ABI entries, Makefiles,
// Kconfig, a selftest's config, .gitignore) need none. A tag on another
// line of a source file is misplaced.
func checkSPDX(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if f.Deleted || len(f.Added) == 0 {
				continue
			}
			at := 1
			first, ok := lineOfFile(f, 1)
			if ok && shebangRE().MatchString(first) {
				at = 2
			}
			for _, l := range f.Added {
				if l.N == at {
					comment := spdxComment(f.Path, at == 2)
					if strings.Contains(l.Text, "SPDX-License-Identifier:") && cStyleRE().MatchString(f.Path) &&
						!strings.HasPrefix(strings.TrimLeft(l.Text, " \t"), comment) {
						c.report(p, f.Path, l.N, "the SPDX-License-Identifier is not in %s's comment style: write it %q", path.Base(f.Path), spdxExample(comment))
					}
					if comment != "" && !strings.HasPrefix(l.Text, comment+" SPDX-License-Identifier: ") {
						c.report(p, f.Path, l.N, "no SPDX-License-Identifier on line %d, or not as license-rules.rst writes it: start the file with e.g. %q", at, spdxExample(comment))
					}
					continue
				}
				if spdxSourceRE().MatchString(f.Path) && spdxInCommentRE().MatchString(l.Text) {
					c.report(p, f.Path, l.N, "the SPDX-License-Identifier is on line %d: move it to line %d", l.N, at)
				}
			}
		}
	}
}

var (
	shebangRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*#!\s*/`) })
	cStyleRE        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.[chsS]$`) })
	spdxSourceRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.(h|c|rs|s|S|sh|dtsi|dts)$`) })
	spdxInCommentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(//|/\*|^\s*\*|^\s*#).*\bSPDX-License-Identifier:`) })
)

// spdxComment is the comment a file's SPDX line starts with, as
// checkpatch.pl has them, or "" for a file that needs none.
func spdxComment(p string, shebang bool) string {
	switch ext := path.Ext(p); {
	case ext == ".h" || ext == ".s" || ext == ".S":
		return "/*"
	case ext == ".c" || ext == ".rs" || ext == ".dts" || ext == ".dtsi":
		return "//"
	case shebang || ext == ".sh" || ext == ".pl" || ext == ".py" || ext == ".awk" || ext == ".tc" || ext == ".yaml":
		return "#"
	case ext == ".rst":
		return ".."
	}
	return ""
}

// spdxExample returns the SPDX line a file with that comment starts with.
func spdxExample(comment string) string {
	if comment == "/*" {
		return "/* SPDX-License-Identifier: GPL-2.0 */"
	}
	return comment + " SPDX-License-Identifier: GPL-2.0"
}

// lineOfFile returns line n of f after the patch: its content when known,
// else the hunks' lines.
func lineOfFile(f *File, n int) (string, bool) {
	if f.Known {
		lines := strings.SplitN(string(f.New), "\n", n+1)
		if len(lines) >= n {
			return lines[n-1], true
		}
		return "", false
	}
	for _, l := range f.newSide {
		if l.N == n {
			return l.Text, true
		}
	}
	return "", false
}

func checkMakefileSpace(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if !isMakefile(f.Path) {
				continue
			}
			for _, l := range f.Added {
				if strings.HasPrefix(l.Text, " ") && strings.TrimSpace(l.Text) != "" {
					c.report(p, f.Path, l.N, "Makefile line starts with spaces: indent with a tab, or not at all")
				}
			}
		}
	}
}

// checkPatchApply reports, in the mail, what git apply refused of each
// patch (ReadMail applies them as git apply --reject does: a hunk, a file,
// the whole patch), and the patches the tree already has.
func checkPatchApply(c *checker) {
	if c.rule.ID == "PATCH_APPLY" {
		for _, u := range c.s.unreadable {
			what := "this mail"
			if u.Subject != "" {
				what = fmt.Sprintf("%q", u.Subject)
			}
			msg, _, _ := strings.Cut(u.Err.Error(), "\n")
			c.report(nil, filepath.Base(u.File), u.Line, "git am stops at %s (mail %d of the series) and verify cannot read it: %s; it is left out and the other patches are checked, as after git am --skip", what, u.Position, msg)
		}
	}
	for _, p := range c.s.Patches {
		switch c.rule.ID {
		case "PATCH_APPLY":
			for _, r := range p.refused {
				c.report(p, p.MailFile, r.line, "%s", r.msg)
			}
		case "PATCH_ALREADY_APPLIED":
			if a := p.alreadyApplied; a != nil {
				c.report(p, p.MailFile, a.line, "%s", a.msg)
			}
		}
	}
}
