package verify

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/kernelsrc"
	"kpatch/verify/cunit"
)

// How the rules read the series' C through package cunit: the series and
// the build trees as cunit reads them, the units per file and patch in
// every build (what cc/v4 could not read reported as C_EVAL), and how a
// Run read the C files, for the report.

// CRead says, for one C file of the series, how verify read it.
type CRead = cunit.CRead

// CReadTree is one build tree a file was read in.
type CReadTree = cunit.CReadTree

// seriesView is s as package cunit reads it.
type seriesView struct {
	s       *Series
	paths   []string
	changes []map[string]*cunit.Change // by patch, from 1
}

// newSeriesView returns s (indexed) as package cunit reads it.
func newSeriesView(s *Series) *seriesView {
	v := &seriesView{s: s, paths: sortedKeys(s.changes), changes: make([]map[string]*cunit.Change, len(s.Patches)+1)}
	for i, p := range s.Patches {
		m := map[string]*cunit.Change{}
		for _, f := range p.Files {
			if _, ok := m[f.Path]; ok {
				continue // fileOf takes the first
			}
			m[f.Path] = &cunit.Change{Known: f.Known, Deleted: f.Deleted, New: f.New, Added: unitLines(f.Added),
				Removed: unitLines(f.Removed), NewSide: unitLines(f.newSide), OldSide: unitLines(f.oldSide)}
		}
		v.changes[i+1] = m
	}
	return v
}

func unitLines(ls []Line) []cunit.Line {
	if ls == nil {
		return nil
	}
	out := make([]cunit.Line, len(ls))
	for i, l := range ls {
		out[i] = cunit.Line{N: l.N, Text: l.Text}
	}
	return out
}

func (v *seriesView) FileAt(path string, n int) ([]byte, bool) { return v.s.FileAt(path, n) }
func (v *seriesView) Version(path string, n int) int           { return v.s.version(path, n) }
func (v *seriesView) Created(path string) bool                 { return v.s.created[path] }
func (v *seriesView) Changes(path string) []int                { return v.s.changes[path] }
func (v *seriesView) Paths() []string                          { return v.paths }
func (v *seriesView) Tree() *kernelsrc.Tree                    { return v.s.Tree }

func (v *seriesView) Change(n int, path string) *cunit.Change {
	if n < 1 || n >= len(v.changes) {
		return nil
	}
	return v.changes[n][path]
}

// unitTree is t as package cunit reads it.
func (t *BuildTree) unitTree() *cunit.Tree {
	return &cunit.Tree{Name: t.Name, Src: t.Src, Arch: t.arch, Bits: t.bits, Key: t.key, Laid: t.laid,
		Command: func(path string) (*kbuild.CompileCommand, string, error) {
			tc := t.command(path)
			return tc.cmd, tc.from, tc.err
		}}
}

// newReader returns the reader of the C of s (indexed) for one Run.
func (s *Series) newReader(ctx context.Context, opt Options) (*cunit.Reader, error) {
	var trees []*cunit.Tree
	for _, t := range opt.BuildTrees {
		trees = append(trees, t.unitTree())
	}
	return cunit.NewReader(newSeriesView(s), cunit.Options{Context: ctx, Trees: trees, Cache: opt.PreprocessCache})
}

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

// unit returns path parsed in e after (or before) patch n (cunit.Reader.Unit).
func (c *checker) unit(path string, n int, side cunit.Side, e cunit.Env) *cunit.Unit {
	c.stopped()
	return c.units.Unit(path, n, side, e)
}

// unitsAt returns path after (or before) patch p in every build (x86_64
// and i386, options on and off); what cc/v4 could not read there is
// reported as C_EVAL.
func (c *checker) unitsAt(p *Patch, path string, side cunit.Side) []*cunit.Unit {
	var out []*cunit.Unit
	for _, e := range cunit.Envs() {
		u := c.unit(path, p.Number, side, e)
		if u == nil {
			continue
		}
		if side == cunit.After {
			if u.Err != nil {
				c.unreadable(p, path, "", 0, fmt.Errorf("%s: %w", e, u.Err))
			}
			for _, f := range u.Failed {
				if f.Fn {
					c.unreadable(p, path, f.Name, f.Start, fmt.Errorf("line %d: %s", f.Line, f.Msg))
				}
			}
		}
		out = append(out, u)
	}
	return out
}

// funcsAt returns the function definitions of path after (or before) patch
// p, in any build, once each (by name and line).
func (c *checker) funcsAt(p *Patch, path string, side cunit.Side) []*cunit.Func {
	return onceByLine(c.unitsAt(p, path, side), func(u *cunit.Unit) []*cunit.Func { return u.Funcs },
		func(f *cunit.Func) (string, int) { return f.Name, f.Line })
}

// declsAt is funcsAt for the function declarations.
func (c *checker) declsAt(p *Patch, path string, side cunit.Side) []cunit.Decl {
	return onceByLine(c.unitsAt(p, path, side), func(u *cunit.Unit) []cunit.Decl { return u.Decls },
		func(d cunit.Decl) (string, int) { return d.Name, d.Line })
}

// onceByLine gathers the items of several builds' units, once each by name
// and line, in line order.
func onceByLine[T any](units []*cunit.Unit, items func(*cunit.Unit) []T, at func(T) (string, int)) []T {
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
	trees   []*BuildTree
	files   []CRead
	checked []string // notes of what the checks after Run left out (Checkpatch)
}

// noteChecked adds a note to the report of s's last Run.
func (s *Series) noteChecked(note string) {
	old := s.cRead.Load()
	ri := &cReadInfo{}
	if old != nil {
		*ri = *old
	}
	ri.checked = append(append([]string(nil), ri.checked...), note)
	s.cRead.Store(ri)
}

// notes says it for the report, one line each.
func (ri *cReadInfo) notes() []string {
	const prelude = "C read by cc/v4 with verify's prelude in place of the kernel headers"
	if ri == nil || len(ri.trees) == 0 {
		out := []string{prelude + " (no kernel build tree: kpatch test build keeps them, or give one with --build-dir)"}
		if ri != nil {
			out = append(out, ri.checked...)
		}
		return out
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
	return append(out, ri.checked...)
}

// refusedIn reports whether git apply refuses part of p's change to path
// (a hunk, the file, the patch): the file as applied is not the author's,
// and what it lacks may be in what was refused.
func (p *Patch) refusedIn(path string) bool {
	for _, r := range p.refused {
		if r.path == path || r.path == "" {
			return true
		}
	}
	return false
}
