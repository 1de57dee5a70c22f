package verify

import (
	"fmt"
	"sort"
	"strings"
)

// How the rules ask for the C units of the series (cunit.go): per file and
// patch, in every build, with what cc/v4 could not read reported as
// C_EVAL; and how a Run read the C files, for the report.

// fileOf returns the change patch n makes to path, or nil.
func fileOf(p *Patch, path string) *File {
	if p == nil {
		return nil
	}
	for _, f := range p.Files {
		if f.Path == path {
			return f
		}
	}
	return nil
}

// unitsAt returns path after (or before) patch p in every build (x86_64
// and i386, options on and off); what cc/v4 could not read there is
// reported as C_EVAL.
func (c *checker) unitsAt(p *Patch, path string, side unitSide) []*cUnit {
	var out []*cUnit
	for _, e := range envs() {
		u := c.unit(path, p.Number, side, e)
		if u == nil {
			continue
		}
		if side == afterPatch {
			if u.err != nil {
				c.unreadable(p, path, "", 0, fmt.Errorf("%s: %w", e, u.err))
			}
			for _, f := range u.failed {
				if f.fn {
					c.unreadable(p, path, f.name, f.start, fmt.Errorf("line %d: %s", f.line, f.msg))
				}
			}
		}
		out = append(out, u)
	}
	return out
}

// funcsAt returns the function definitions of path after (or before) patch
// p, in any build, once each (by name and line).
func (c *checker) funcsAt(p *Patch, path string, side unitSide) []*cFunc {
	return onceByLine(c.unitsAt(p, path, side), func(u *cUnit) []*cFunc { return u.funcs },
		func(f *cFunc) (string, int) { return f.name, f.line })
}

// declsAt is funcsAt for the function declarations.
func (c *checker) declsAt(p *Patch, path string, side unitSide) []cDecl {
	return onceByLine(c.unitsAt(p, path, side), func(u *cUnit) []cDecl { return u.decls },
		func(d cDecl) (string, int) { return d.name, d.line })
}

// onceByLine gathers the items of several builds' units, once each by name
// and line, in line order.
func onceByLine[T any](units []*cUnit, items func(*cUnit) []T, at func(T) (string, int)) []T {
	var out []T
	seen := map[string]bool{}
	for _, u := range units {
		for _, it := range items(u) {
			name, line := at(it)
			k := fmt.Sprintf("%s:%d", name, line)
			if !seen[k] {
				seen[k] = true
				out = append(out, it)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { _, a := at(out[i]); _, b := at(out[j]); return a < b })
	return out
}

// within reports whether every line from a to b is one of lines.
func within(a, b int, lines []Line) bool {
	have := map[int]bool{}
	for _, l := range lines {
		have[l.N] = true
	}
	for i := a; i <= b; i++ {
		if !have[i] {
			return false
		}
	}
	return a <= b
}

// cReadInfo is how a Run read the C files: the build trees it was given,
// and per C file the way its units were read.
type cReadInfo struct {
	trees []*BuildTree
	files []CRead
}

// notes says it for the report, one line each.
func (ri *cReadInfo) notes() []string {
	const prelude = "C read by cc/v4 with verify's prelude in place of the kernel headers"
	if ri == nil || len(ri.trees) == 0 {
		return []string{prelude + " (no kernel build tree: kpatch test build keeps them, or give one with --build-dir)"}
	}
	var out []string
	for _, f := range ri.files {
		var via []string
		for _, t := range f.Trees {
			via = append(via, fmt.Sprintf("config %s, flags of %s", t.Config, t.Flags))
		}
		switch f.Via {
		case "kbuild":
			out = append(out, fmt.Sprintf("%s: C read from kbuild's preprocessed unit (%s)", f.File, strings.Join(via, "; ")))
		case "both":
			out = append(out, fmt.Sprintf("%s: C read from kbuild's preprocessed unit (%s), at some patches by cc/v4 with verify's prelude: %s", f.File, strings.Join(via, "; "), f.Why))
		default:
			out = append(out, fmt.Sprintf("%s: %s: %s", f.File, prelude, f.Why))
		}
	}
	out = append(out, "headers the series creates: read by cc/v4 with verify's prelude for the header rules (STUB_PARITY, ARCH_HOOK, UNUSED_INLINE, ...), and as the compiler reads them inside the C files above")
	if len(ri.files) == 0 {
		var names []string
		for _, t := range ri.trees {
			names = append(names, t.Name)
		}
		out = append(out, fmt.Sprintf("no C file of the series to read in the build trees (%s)", strings.Join(names, ", ")))
	}
	return out
}
