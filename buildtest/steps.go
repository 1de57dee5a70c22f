package buildtest

import (
	"bytes"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"kpatch/plumbing/linediff"
	"kpatch/series"
	"kpatch/series/standin"
	"kpatch/spec"
)

// steps is the tree as the series is applied: the content of every file
// the series touches after each patch, and where each line came from.
type steps struct {
	s       *series.Series
	n       int
	files   []map[string][]byte // files[k]: after patch k, every path patches 1..k touched
	touched [][]string          // touched[k]: the paths patch k changes
	specFS  fs.FS               // the series description (for template sources)
	origins map[string][][]int  // path -> step -> line -> patch number that introduced it (0: base)
	// alignments: template source and rendered content -> their diff
	// (templateLine)
	alignments map[string][]linediff.Change
}

// newSteps derives the steps of s; the sources of its templates are read
// from the spec s was generated from, so they cannot disagree with it.
func newSteps(s *series.Series) *steps {
	st := &steps{s: s, n: len(s.Patches), origins: map[string][][]int{}}
	st.specFS = s.Revision.Spec().FS()
	cur := map[string][]byte{}
	st.files = append(st.files, map[string][]byte{})
	st.touched = append(st.touched, nil)
	for _, p := range s.Patches {
		var t []string
		for _, f := range p.Files {
			cur[f.Path] = f.New
			t = append(t, f.Path)
		}
		m := make(map[string][]byte, len(cur))
		for k, v := range cur {
			m[k] = v
		}
		st.files = append(st.files, m)
		st.touched = append(st.touched, t)
	}
	return st
}

// at returns the content of path after step k and whether the series
// has touched it by then.
func (st *steps) at(path string, k int) ([]byte, bool) {
	c, ok := st.files[k][path]
	return c, ok
}

// patch returns the series' patch number k (1-based).
func (st *steps) patch(k int) *series.Patch { return st.s.Patches[k-1] }

// originAt returns, for each line of path after step k, the number of the
// patch that introduced it (0: the base tree), following the lines
// through every patch that changed the file, as git blame would.
func (st *steps) originAt(path string, k int) []int {
	o := st.origins[path]
	if o == nil {
		var prev []byte
		var cur []int
		for j := 0; j <= st.n; j++ {
			if j > 0 {
				for _, f := range st.patch(j).Files {
					if f.Path != path {
						continue
					}
					next := make([]int, countLines(f.New))
					// unchanged lines keep their origin; new ones are patch j's.
					oi, ni := 0, 0
					for _, ch := range linediff.Changes(prev, f.New) {
						for ni < ch.NewStart {
							if oi < len(cur) {
								next[ni] = cur[oi]
							}
							oi++
							ni++
						}
						for i := 0; i < ch.NewLines; i++ {
							next[ni] = j
							ni++
						}
						oi += ch.OldLines
					}
					for ni < len(next) {
						if oi < len(cur) {
							next[ni] = cur[oi]
						}
						oi++
						ni++
					}
					if prev == nil && f.Created {
						for i := range next {
							next[i] = j
						}
					}
					prev, cur = f.New, next
				}
			} else {
				if b, ok := st.baseContent(path); ok {
					prev = b
					cur = make([]int, countLines(b))
				}
			}
			o = append(o, cur)
		}
		st.origins[path] = o
	}
	return o[k]
}

// baseContent is the file before the first patch that touches it.
func (st *steps) baseContent(path string) ([]byte, bool) {
	for _, p := range st.s.Patches {
		for _, f := range p.Files {
			if f.Path == path {
				return f.Old, f.Old != nil
			}
		}
	}
	return nil, false
}

func countLines(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte("\n"))
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// Origin says where a line of the tree after some patch came from.
type Origin struct {
	Patch   int    `json:"patch"` // the patch that introduced the line; 0: the base tree
	PatchID string `json:"patch_id,omitempty"`
	Source  string `json:"source,omitempty"` // the template line or edit that wrote it: "files/kernel/unwind/user.c.tmpl:57", "v11/04-faultable.patch:36"
}

// String says it in words.
func (o Origin) String() string {
	if o.Patch == 0 {
		return "line of the base tree"
	}
	s := fmt.Sprintf("line from patch %d (%s)", o.Patch, o.PatchID)
	if o.Source != "" {
		s += ", written at " + o.Source
	}
	return s
}

// origin returns where line (1-based) of path after step k came from; ok
// is false for a file the series never touched.
func (st *steps) origin(path string, line, k int) (Origin, bool) {
	if _, ok := st.at(path, k); !ok {
		return Origin{}, false
	}
	o := st.originAt(path, k)
	if line < 1 || line > len(o) {
		return Origin{}, false
	}
	j := o[line-1]
	if j == 0 {
		return Origin{}, true
	}
	p := st.patch(j)
	or := Origin{Patch: j, PatchID: p.ID}
	content, _ := st.at(path, k)
	text := lineOf(content, line)
	if tf := st.template(path); tf != "" {
		or.Source = tf
		if n := st.templateLine(tf, content, line); n > 0 {
			or.Source = fmt.Sprintf("%s:%d", tf, n)
		}
		return or, true
	}
	var cands []spec.Edit
	for _, e := range p.Edits {
		if e.Path == path {
			cands = append(cands, e)
		}
	}
	for _, e := range p.Edits { // a function moved into this file
		if e.Op == "move-function" && len(e.Args) > 1 && e.Args[1] == path {
			cands = append([]spec.Edit{e}, cands...)
		}
	}
	for _, e := range cands {
		if strings.Contains(e.Text, strings.TrimSpace(text)) && strings.TrimSpace(text) != "" {
			or.Source = e.Src
			return or, true
		}
	}
	if len(cands) > 0 {
		or.Source = cands[0].Src
	}
	return or, true
}

// template returns the spec path of the template of a created file.
func (st *steps) template(path string) string {
	if f := st.s.Revision.Spec().Templates[path]; f != nil {
		return f.Src
	}
	return ""
}

// templateLine maps line (1-based) of a rendered file to the template
// line that produced it: the rendered lines are the template's literal
// lines minus those its guards leave out, so aligning the two with a diff
// pairs each rendered line with its template line. 0 if the line does not
// appear as such in the template (it holds an action).
func (st *steps) templateLine(tf string, content []byte, line int) int {
	// The alignment is computed once per template and rendered content:
	// origin asks about every line of a file in turn.
	key := tf + "\x00" + string(content)
	changes, ok := st.alignments[key]
	if !ok {
		src, err := fs.ReadFile(st.specFS, tf)
		if err != nil {
			return 0
		}
		changes = linediff.Changes(src, content)
		if st.alignments == nil {
			st.alignments = map[string][]linediff.Change{}
		}
		st.alignments[key] = changes
	}
	oi, ni := 0, 0
	for _, ch := range changes {
		if line-1 < ch.NewStart {
			return oi + (line - 1 - ni) + 1
		}
		if line-1 < ch.NewStart+ch.NewLines {
			return 0
		}
		oi = ch.OldStart + ch.OldLines
		ni = ch.NewStart + ch.NewLines
	}
	return oi + (line - 1 - ni) + 1
}

func lineOf(b []byte, n int) string {
	lines := strings.Split(string(b), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return lines[n-1]
}

// overlay returns the files laid over the base tree after step k: the
// series' files, the test-only Kconfig hook and the stand-ins for what the
// revision needs of its base and the base lacks, said one line each
// (package standin).
func (st *steps) overlay(k int, base func(string) ([]byte, bool, error)) (files map[string][]byte, standIns []string, err error) {
	files = map[string][]byte{}
	for p, c := range st.files[k] {
		if c != nil {
			files[p] = c
		}
	}
	files[HookDir+"/Kconfig"] = []byte(HookKconfig)
	top, ok := files["Kconfig"]
	if !ok {
		b, exists, err := base("Kconfig")
		if err != nil {
			return nil, nil, err
		}
		if !exists {
			return nil, nil, fmt.Errorf("the base tree has no top-level Kconfig: is --tree a Linux kernel tree?")
		}
		top = b
	}
	files["Kconfig"] = append(append([]byte{}, top...), "\nsource \""+HookDir+"/Kconfig\"\n"...)
	if k > 0 {
		used, err := standin.Apply(st.s.Revision, k, files, base)
		if err != nil {
			return nil, nil, err
		}
		for _, n := range used {
			standIns = append(standIns, n.String())
		}
	}
	return files, standIns, nil
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// movedFrom returns the file a warning's line was moved from: patch j,
// which wrote the line (at step k), removed a line of the same text from
// another file, and that file had the same warning at the base (baseHas
// answers for a file and a Diag key). It returns "" otherwise.
func (st *steps) movedFrom(d Diag, k, j int, baseHas func(file, key string) bool) string {
	if j < 1 {
		return ""
	}
	content, ok := st.at(d.File, k)
	if !ok {
		return ""
	}
	text := strings.TrimSpace(lineOf(content, d.Line))
	if text == "" {
		return ""
	}
	rest := strings.TrimPrefix(d.Key(), d.File)
	for _, f := range st.patch(j).Files {
		if f.Path == d.File || f.Old == nil {
			continue
		}
		// The text first: asking the base may compile (in the on-demand
		// method, every object that includes a header).
		old := strings.Split(string(f.Old), "\n")
		removed := false
		for _, ch := range linediff.Changes(f.Old, f.New) {
			for i := ch.OldStart; i < ch.OldStart+ch.OldLines && i < len(old); i++ {
				removed = removed || strings.TrimSpace(old[i]) == text
			}
		}
		if removed && baseHas(f.Path, f.Path+rest) {
			return f.Path
		}
	}
	return ""
}
