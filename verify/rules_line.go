package verify

import (
	"strings"
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

func checkLongLines(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if !isCode(f.Path) && !isMakefile(f.Path) && !strings.Contains(f.Path, "Kconfig") {
				continue
			}
			for _, l := range f.Added {
				n := columns(l.Text)
				if n <= 100 {
					continue
				}
				// checkpatch's exceptions: a quoted string or a URL
				// that cannot be split.
				if strings.Contains(l.Text, "://") || (strings.Count(l.Text, `"`) >= 2 && !strings.Contains(l.Text, ";")) {
					continue
				}
				c.report(p, f.Path, l.N, "line is %d columns, over 100: break it (one parameter per line, or a shorter type name)", n)
			}
		}
	}
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

// spdxLine is the line a new file's SPDX tag must be on: 1, or 2 after a
// "#!" line.
func checkSPDX(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if !f.Created || len(f.Added) == 0 {
				continue
			}
			want := 0
			if strings.HasPrefix(f.Added[0].Text, "#!") {
				want = 1
			}
			if want >= len(f.Added) || !strings.Contains(f.Added[want].Text, "SPDX-License-Identifier:") {
				c.report(p, f.Path, want+1, "no SPDX-License-Identifier on line %d of a new file: start it with e.g. \"%s\"",
					want+1, spdxExample(f.Path))
			}
		}
	}
}

// spdxExample returns the SPDX line a new file of that kind starts with.
func spdxExample(path string) string {
	switch {
	case strings.HasSuffix(path, ".h"):
		return "/* SPDX-License-Identifier: GPL-2.0 */"
	case strings.HasSuffix(path, ".c"):
		return "// SPDX-License-Identifier: GPL-2.0"
	}
	return "# SPDX-License-Identifier: GPL-2.0"
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
