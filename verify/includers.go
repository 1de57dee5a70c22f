package verify

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"kpatch/verify/cunit"
)

// usedByTree reports whether a .c file of the tree uses name from the
// header hdr the series creates, at patch p. A new header reaches files
// the series does not create only through a header of the series that
// includes it: prjc's kernel/sched/alt_sched.h, included by the
// kernel/sched/sched.h it edits, gives task_current() and
// uclamp_eff_value() to idle.c, psi.c and cpufreq_schedutil.c as the
// header it stands in for does. Those headers are directory-local
// ("sched.h" is found by the files beside it), so the files searched are
// the .c files of their directories, as the series leaves them at p; a
// header under an include/ directory reaches every directory, which is
// not searched, and nothing is said to be used there.
func (c *checker) usedByTree(p *Patch, hdr, name string) bool {
	if c.s.Tree == nil {
		return false
	}
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	uses := func(code []byte) bool { return bytes.Contains(code, []byte(name)) && re.Match(code) }
	for _, dir := range c.includerDirs(p, hdr) {
		if uses(c.dirCode(dir)) {
			return true
		}
		for _, f := range c.s.changed() {
			if path.Dir(f) != dir || !strings.HasSuffix(f, ".c") {
				continue
			}
			if text, ok := c.s.FileAt(f, p.Number); ok && uses(cunit.CodeOnly(text)) {
				return true
			}
		}
	}
	return false
}

// includerDirs returns the directories whose files see hdr at patch p:
// those of the series' headers that include it (directly or through
// another of them), except include/ directories.
func (c *checker) includerDirs(p *Patch, hdr string) []string {
	heads := map[string]bool{hdr: true}
	for changed := true; changed; {
		changed = false
		for _, s := range c.s.changed() {
			if heads[s] || !strings.HasSuffix(s, ".h") {
				continue
			}
			text, ok := c.s.FileAt(s, p.Number) // as the series leaves it at p; absent when deleted
			if !ok {
				continue
			}
			for _, m := range includeRE().FindAllSubmatch(text, -1) {
				if heads[included(s, string(m[1]), string(m[2]))] {
					heads[s], changed = true, true
					break
				}
			}
		}
	}
	var dirs []string
	for h := range heads {
		if h == hdr {
			continue // no file of the tree includes a header it did not have
		}
		d := path.Dir(h)
		if d == "include" || strings.HasPrefix(d, "include/") || strings.Contains(d, "/include/") || strings.HasSuffix(d, "/include") {
			continue
		}
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// included resolves an #include of the header from: quoted names beside
// it, angle names under include/ (as the kernel's -I gives them).
func included(from, open, name string) string {
	if open == `"` {
		return path.Clean(path.Join(path.Dir(from), name))
	}
	return "include/" + name
}

// includeRE is an #include line: its opening delimiter and its name.
var includeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*(["<])([^">]+)[">]`)
})

// dirCode returns the code (comments and strings blanked) of the .c
// files of dir in the base tree that the series does not change, read
// once per run.
func (c *checker) dirCode(dir string) []byte {
	if c.dirCodes == nil {
		c.dirCodes = map[string][]byte{}
	}
	if code, ok := c.dirCodes[dir]; ok {
		return code
	}
	touched := map[string]bool{}
	for _, f := range c.s.changed() {
		touched[f] = true
	}
	var b bytes.Buffer
	ents, _ := c.s.Tree.Entries(dir)
	for _, e := range ents {
		p := path.Join(dir, e.Name)
		if e.IsDir() || !strings.HasSuffix(p, ".c") || touched[p] {
			continue
		}
		if text, err := c.s.Tree.ReadFile(p); err == nil {
			b.Write(cunit.CodeOnly(text))
			b.WriteByte('\n')
		}
	}
	c.dirCodes[dir] = b.Bytes()
	return c.dirCodes[dir]
}
