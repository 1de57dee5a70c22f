package verify

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"kpatch/verify/cunit"

	"regexp"
)

var hookRules = []Rule{
	{ID: "ARCH_HOOK", Severity: Error,
		Why:   "an override that does not #define the hook name, or has another type, silently gets the generic default or breaks only that architecture's build",
		check: checkArchHooks},
	{ID: "MACRO_CASE", Severity: Warning, Scope: SeriesScope,
		Why:   "this series names its function-like macros in lower case, as the arch hooks beside them (in_compat_mode()); coding-style.rst allows either (\"CAPITALIZED macro names are appreciated\"), so it is the series' rule, not the kernel's",
		check: checkMacroCase},
}

var (
	hookDefaultRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^#\s*ifndef\s+(arch_\w+)\s*$`) })
	hookOverrideRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^#\s*define\s+(arch_\w+)\s+(arch_\w+)\s*$`) })
)

// hookSite is where a hook is defaulted or overridden.
type hookSite struct {
	file string
	line int
}

func isGenericHeader(p string) bool {
	return strings.HasPrefix(p, "include/linux/") || strings.HasPrefix(p, "include/asm-generic/")
}

// checkArchHooks checks the "#ifndef arch_x / default / #endif" plus
// "#define arch_x arch_x" pattern at every patch that changes a header the
// series creates: every default block defines its hook, every override
// #defines the name to itself, and an overriding function has the type of
// the default (both evaluated with cc/v4, on x86_64 with the options on).
func checkArchHooks(c *checker) {
	env := cunit.Envs()[0]
	for _, p := range c.s.Patches {
		c.stopped()
		changed := false
		for _, f := range p.Files {
			if c.s.created[f.Path] && strings.HasSuffix(f.Path, ".h") && isC(f.Path) && f.Known {
				changed = true
			}
		}
		if !changed {
			continue
		}
		var headers []string
		for path := range c.s.created {
			if strings.HasSuffix(path, ".h") && isC(path) {
				if _, ok := c.s.FileAt(path, p.Number); ok {
					headers = append(headers, path)
				}
			}
		}
		sort.Strings(headers)
		defaults := map[string]hookSite{}
		defaultTypes := map[string]cunit.FuncType{}
		for _, h := range headers {
			if !isGenericHeader(h) {
				continue
			}
			src, _ := c.s.FileAt(h, p.Number)
			ms := hookDefaultRE().FindAllSubmatchIndex(src, -1)
			if len(ms) == 0 {
				continue
			}
			var fns map[string]cunit.FuncType
			for _, m := range ms {
				name := string(src[m[2]:m[3]])
				line := 1 + strings.Count(string(src[:m[0]]), "\n")
				defaults[name] = hookSite{h, line}
				end := strings.Index(string(src[m[1]:]), "#endif")
				if end < 0 {
					continue
				}
				body := string(src[m[1] : m[1]+end])
				if !regexp.MustCompile(`\b` + name + `\b`).MatchString(body) {
					if c.once(fmt.Sprintf("empty default %s %s", h, name)) {
						c.report(p, h, line, "#ifndef %s does not define %s: the block is the generic default of the hook and must define it", name, name)
					}
					continue
				}
				if fns == nil {
					ast, err := c.units.TranslateWith(p.Number, env, true, h, src, "")
					if err != nil {
						c.evalFailed(p, h, fmt.Errorf("%s, generic defaults: %w", env, err))
						break
					}
					fns = cunit.Functions(ast, h)
				}
				if ft, ok := fns[name]; ok {
					defaultTypes[name] = ft
				}
			}
		}
		for _, h := range headers {
			if isGenericHeader(h) {
				continue
			}
			src, _ := c.s.FileAt(h, p.Number)
			overrides := map[string]int{}
			for _, m := range hookOverrideRE().FindAllSubmatchIndex(src, -1) {
				a, b := string(src[m[2]:m[3]]), string(src[m[4]:m[5]])
				line := 1 + strings.Count(string(src[:m[0]]), "\n")
				if a != b {
					if c.once(fmt.Sprintf("override %s %s %s", h, a, b)) {
						c.report(p, h, line, "#define %s %s: an override defines the hook name to itself, #define %s %s", a, b, a, a)
					}
					continue
				}
				overrides[a] = line
			}
			var fns map[string]cunit.FuncType
			needTypes := false
			for name := range defaults {
				if strings.Contains(string(src), name) {
					needTypes = true
				}
			}
			if needTypes {
				ast, err := c.units.Translate(p.Number, env, h, src, "")
				if err != nil {
					c.evalFailed(p, h, fmt.Errorf("%s: %w", env, err))
					continue
				}
				fns = cunit.Functions(ast, h)
			}
			for _, name := range sortedKeys(fns) {
				ft := fns[name]
				def, isHook := defaults[name]
				if !isHook {
					continue
				}
				if _, ok := overrides[name]; !ok {
					if c.once(fmt.Sprintf("no define %s %s", h, name)) {
						c.report(p, h, ft.Line, "%s() overrides the hook of %s:%d without \"#define %s %s\": the generic default is defined as well", name, def.file, def.line, name, name)
					}
					continue
				}
				if dt, ok := defaultTypes[name]; ok && dt.Type != ft.Type && c.once(fmt.Sprintf("type %s %s %s", h, name, ft.Type)) {
					c.report(p, h, ft.Line, "%s() has type %s, the generic default (%s:%d) %s: give the override the default's parameters and result", name, ft.Type, def.file, def.line, dt.Type)
				}
			}
			for _, name := range sortedKeys(overrides) {
				if _, ok := defaults[name]; !ok && c.once(fmt.Sprintf("orphan %s %s", h, name)) {
					c.report(p, h, overrides[name], "%s overrides a hook that no generic header defaults with #ifndef %s: add the default, or drop the override", name, name)
				}
			}
		}
	}
}

var (
	fnMacroRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#\s*define\s+([A-Za-z_]\w*)\(([^)]*)\)\s*(.*)$`) })
	actsLikeFn = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[!~-]?\s*\(*\s*[a-z_]\w*\s*\(|\(\{|do\s*\{|for\s*\()`)
	})
)

// checkMacroCase reports function-like macros the patch adds in C files
// whose body acts as a function (calls one, is a statement expression, a
// do-while block or a loop) under an upper-case name.
func checkMacroCase(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if !isCode(f.Path) {
				continue
			}
			for i, l := range f.Added {
				m := fnMacroRE().FindStringSubmatch(strings.TrimSpace(l.Text))
				if m == nil || strings.ToUpper(m[1]) != m[1] {
					continue
				}
				body := strings.TrimSpace(strings.TrimSuffix(m[3], "\\"))
				if body == "" && i+1 < len(f.Added) && f.Added[i+1].N == l.N+1 {
					body = strings.TrimSpace(strings.TrimSuffix(f.Added[i+1].Text, "\\"))
				}
				if actsLikeFn().MatchString(body) {
					c.report(p, f.Path, l.N, "%s() is a function-like macro that acts as a function: this series names those in lower case, %s()", m[1], strings.ToLower(m[1]))
				}
			}
		}
	}
}
