package spec

import (
	"bytes"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

var placeholderFuncs = map[string]any{
	"created": func(string) (string, error) { return "", nil },
	"since":   func(string) (bool, error) { return false, nil },
	"before":  func(string) (bool, error) { return false, nil },
	"between": func(string, string) (bool, error) { return false, nil },
}

// RenderData is what a template sees as ".".
type RenderData struct {
	Version int    // the revision being rendered (of a stacked series: its prerequisite's)
	Step    int    // the number of patches applied
	Patch   string // the id of the last applied patch, "" before the first
	// Stack and StackVersion name the stacked series being rendered and
	// its own revision ("x86", 2 for x86 v2); "" and 0 for the main
	// series. A trailer given to a stacked series is guarded by them.
	Stack        string
	StackVersion int
}

// knownID reports whether any revision of the spec has a patch with this id.
func (s *Spec) knownID(id string) bool {
	for _, revs := range [][]*Revision{s.Revisions, s.Stacked} {
		for _, r := range revs {
			for _, p := range r.Patches {
				if p.has(id) {
					return true
				}
			}
		}
	}
	return false
}

// has reports whether the patch is id or has patch id folded into it.
func (p *Patch) has(id string) bool {
	if p.ID == id {
		return true
	}
	for _, f := range p.Folded {
		if f == id {
			return true
		}
	}
	return false
}

// position returns the number of the patch with that id in r, 0 if r does
// not have it (a patch of another revision), or an error for an id that no
// revision has.
func (r *Revision) position(id string) (int, error) {
	for _, p := range r.Patches {
		if p.has(id) {
			return p.Number, nil
		}
	}
	if r.spec.knownID(id) {
		return 0, nil
	}
	return 0, fmt.Errorf("unknown patch id %q", id)
}

// Render renders the template of the created file path after step patches
// of r are applied. exists is false while the patch that creates the file is
// not applied yet.
func (r *Revision) Render(path string, step int) (content []byte, exists bool, err error) {
	f := r.spec.Templates[path]
	if f == nil {
		return nil, false, fmt.Errorf("no template for %s", path)
	}
	if f.createdBy != "" {
		if n, err := r.position(f.createdBy); err == nil && (n == 0 || step < n) {
			return nil, false, nil // created later, or by another revision
		}
	}
	out, created, err := r.execute(f, step)
	if err != nil {
		return nil, false, invalid(err)
	}
	if created < 0 {
		return nil, false, invalid(fmt.Errorf("%s: the template does not start with {{created \"id\"}}", f.Src))
	}
	if step < created {
		return nil, false, nil
	}
	return out, true, nil
}

// Facts renders the facts template facts/<name>.tmpl after step patches of
// r and returns its "key: value" lines. Facts are what the series says
// about itself beyond its code (what the walker models of a kernel built
// with it, the configurations a build needs, the self-tests' expectations),
// guarded like the templates by patch id and revision.
func (r *Revision) Facts(name string, step int) (map[string]string, error) {
	f := r.spec.Facts[name]
	if f == nil {
		return nil, invalid(fmt.Errorf("no facts/%s.tmpl", name))
	}
	if step < 0 || step > len(r.Patches) {
		return nil, fmt.Errorf("v%d has patches 1 to %d, not %d", r.Version, len(r.Patches), step)
	}
	out, _, err := r.execute(f, step)
	if err != nil {
		return nil, invalid(err)
	}
	facts := map[string]string{}
	for i, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return nil, invalid(fmt.Errorf("%s rendered for v%d after patch %d: line %d: want \"key: value\", got %q", f.Src, r.Version, step, i+1, l))
		}
		k = strings.TrimSpace(k)
		if _, dup := facts[k]; dup {
			return nil, invalid(fmt.Errorf("%s rendered for v%d after patch %d: %s is given twice", f.Src, r.Version, step, k))
		}
		facts[k] = strings.TrimSpace(v)
	}
	return facts, nil
}

// execute renders f after step patches of r, and returns the step of its
// {{created}} (-1 if it has none).
func (r *Revision) execute(f *File, step int) ([]byte, int, error) {
	var key string
	if f.cacheable {
		b := []byte(r.renders)
		for _, id := range f.ids {
			n, err := r.position(id)
			if err != nil {
				b = nil // let the render report it
				break
			}
			if n != 0 && n <= step {
				b = append(b, '1')
			} else {
				b = append(b, '0')
			}
		}
		key = string(b)
		if b != nil {
			f.mu.Lock()
			c, ok := f.cache[key]
			f.mu.Unlock()
			if ok {
				return bytes.Clone(c.out), c.created, nil
			}
		}
	}
	out, created, err := r.executeTemplate(f, step)
	if err == nil && key != "" {
		f.mu.Lock()
		f.cache[key] = rendered{out: bytes.Clone(out), created: created}
		f.mu.Unlock()
	}
	return out, created, err
}

// renderData is what r's templates see after step patches.
func (r *Revision) renderData(step int) RenderData {
	d := RenderData{Version: r.guardVersion(), Step: step, Stack: r.StackName()}
	if d.Stack != "" {
		d.StackVersion = r.Version
	}
	return d
}

// executeTemplate runs f's template after step patches of r, on a clone
// that has the guard functions of r at that step.
func (r *Revision) executeTemplate(f *File, step int) ([]byte, int, error) {
	d := r.renderData(step)
	if step > 0 && step <= len(r.Patches) {
		d.Patch = r.Patches[step-1].ID
	}
	applied := func(id string) (bool, error) {
		n, err := r.position(id)
		return err == nil && n != 0 && n <= step, err
	}
	created := -1
	createdBy := func(id string) error {
		n, err := r.position(id)
		if err != nil {
			return err
		}
		if n == 0 {
			n = len(r.Patches) + 1 // created by a patch of another revision
		}
		created = n
		return nil
	}
	t, err := f.tmpl.Clone()
	if err != nil {
		return nil, 0, err
	}
	t.Funcs(guardFuncs(applied, createdBy))
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return nil, 0, fmt.Errorf("rendering %s: %w", f.Src, err)
	}
	return buf.Bytes(), created, nil
}

// guardFuncs returns the spec's functions as a render calls them: created,
// since, before and between, from whether a patch is applied (applied) and
// the patch that creates the file (created).
func guardFuncs(applied func(id string) (bool, error), created func(id string) error) map[string]any {
	return map[string]any{
		"created": func(id string) (string, error) { return "", created(id) },
		"since":   applied,
		"before": func(id string) (bool, error) {
			ok, err := applied(id)
			return !ok, err
		},
		"between": func(a, b string) (bool, error) {
			okA, err := applied(a)
			if err != nil {
				return false, err
			}
			okB, err := applied(b)
			return okA && !okB, err
		},
	}
}

// CreatedFiles returns the paths of all templates, sorted.
func (s *Spec) CreatedFiles() []string {
	var out []string
	for p := range s.Templates {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Spec returns the series description the revision belongs to.
func (r *Revision) Spec() *Spec { return r.spec }

// FS returns the series description the spec was loaded from, to read a
// template's source (the spec directory, or the embedded templates/linux).
func (s *Spec) FS() fs.FS { return s.fsys }
