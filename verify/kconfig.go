package verify

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"kpatch/plumbing/kernelsrc"
)

var kconfigRules = []Rule{
	{ID: "KCONFIG_SYMBOL", Severity: Error,
		Why:   "Kconfig ignores a select or depends on of an unknown symbol without a word: the option silently does nothing",
		check: checkKconfigSymbols},
}

var configRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*(?:menu)?config[ \t]+([A-Za-z0-9_]+)`) })

func isKconfig(p string) bool { return strings.HasPrefix(path.Base(p), "Kconfig") }

// kconfigCache holds the symbols of a tree, by directory and base commit.
var kconfigCache sync.Map

// kconfigSymbols returns every symbol a Kconfig file of the tree defines
// at the base: all of the tree's Kconfig* files are read once.
func kconfigSymbols(t *kernelsrc.Tree) (map[string]bool, error) {
	key := t.Dir + "@" + t.Commit.String()
	if v, ok := kconfigCache.Load(key); ok {
		return v.(map[string]bool), nil
	}
	syms := map[string]bool{}
	add := func(c []byte) {
		for _, m := range configRE().FindAllSubmatch(c, -1) {
			syms[string(m[1])] = true
		}
	}
	if t.IsGit() {
		// Walk the trees only and read just the Kconfig blobs.
		var walk func(dir string) error
		walk = func(dir string) error {
			ents, err := t.Entries(dir)
			if err != nil {
				return err
			}
			for _, e := range ents {
				p := path.Join(dir, e.Name)
				switch {
				case e.IsDir():
					if err := walk(p); err != nil {
						return err
					}
				case isKconfig(p):
					c, err := t.ReadFile(p)
					if err != nil {
						return err
					}
					add(c)
				}
			}
			return nil
		}
		if err := walk(""); err != nil {
			return nil, err
		}
	} else {
		err := filepath.WalkDir(t.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if !d.IsDir() && isKconfig(p) {
				c, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				add(c)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	kconfigCache.Store(key, syms)
	return syms, nil
}

var (
	ifWordRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bif\b`) })
	kconfigRefRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]*(select|imply|depends on)[ \t]+(.*)$`) })
	symbolRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[A-Z][A-Z0-9_]*\b`) })
)

// checkKconfigSymbols: every symbol a patch's Kconfig lines select, imply
// or depend on exists in the tree at that patch (the base's Kconfig files
// plus what the series has defined so far).
func checkKconfigSymbols(c *checker) {
	if c.s.Tree == nil {
		return
	}
	// First the Kconfig files the series touches and the top-level ones,
	// read at the base; all of the tree's only when a symbol is not there.
	base := map[string]bool{}
	near := []string{"Kconfig", "init/Kconfig", "arch/Kconfig"}
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if isKconfig(f.Path) {
				near = append(near, f.Path)
			}
		}
	}
	for _, path := range near {
		if b, err := c.s.Tree.ReadFile(path); err == nil {
			for _, m := range configRE().FindAllSubmatch(b, -1) {
				base[string(m[1])] = true
			}
		}
	}
	all := false
	known := func(sym string) bool {
		if base[sym] {
			return true
		}
		if !all {
			syms, err := kconfigSymbols(c.s.Tree)
			if err != nil {
				c.evalFailed(nil, "Kconfig", err)
				return true
			}
			for s := range syms {
				base[s] = true
			}
			all = true
		}
		return base[sym]
	}
	defined := map[string]bool{}
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if isKconfig(f.Path) {
				for _, l := range f.Added {
					if m := configRE().FindStringSubmatch(l.Text); m != nil {
						defined[m[1]] = true
					}
				}
			}
		}
		for _, f := range p.Files {
			if !isKconfig(f.Path) {
				continue
			}
			for _, l := range f.Added {
				m := kconfigRefRE().FindStringSubmatch(l.Text)
				if m == nil {
					continue
				}
				target, cond := m[2], ""
				if m[1] == "depends on" {
					target, cond = "", m[2]
				} else if i := ifWordRE().FindStringIndex(m[2]); i != nil {
					target, cond = m[2][:i[0]], m[2][i[1]:]
				}
				for _, sym := range symbolRE().FindAllString(target, -1) {
					if !defined[sym] && !known(sym) {
						c.report(p, f.Path, l.N, "%s %s: no Kconfig file defines %s at this patch: fix the name, or add its \"config %s\" in this or an earlier patch", m[1], sym, sym, sym)
					}
				}
				if strings.Contains(cond, "||") {
					cond = "" // an unknown alternative leaves the others: the option still works
				}
				for _, sym := range symbolRE().FindAllString(cond, -1) {
					if !defined[sym] && !known(sym) {
						c.report(p, f.Path, l.N, "%q tests %s, which no Kconfig file defines at this patch (so it is n): fix the name, or add its \"config %s\" in this or an earlier patch", strings.TrimSpace(l.Text), sym, sym)
					}
				}
			}
		}
	}
}
