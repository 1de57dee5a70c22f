package spec

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/template"
)

func parseHeader(sc *bufio.Scanner, src string, line *int, set func(k, v string) error) error {
	for sc.Scan() {
		*line++
		l := sc.Text()
		if l == "" {
			return nil
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return fmt.Errorf("%s:%d: want \"Key: value\", got %q", src, *line, l)
		}
		if err := set(k, strings.TrimSpace(v)); err != nil {
			return fmt.Errorf("%s:%d: %w", src, *line, err)
		}
	}
	return nil
}

// splitList splits a To or Cc value at the commas between addresses, not
// at those inside a quoted display name ("Liang, Kan" <...>), a comment or
// angle brackets.
func splitList(v string) []string {
	var out []string
	quoted, depth, start := false, 0, 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) {
			switch c := v[i]; {
			case c == '\\' && quoted && i+1 < len(v):
				i++
				continue
			case c == '"':
				quoted = !quoted
				continue
			case quoted:
				continue
			case c == '<' || c == '(':
				depth++
				continue
			case c == '>' || c == ')':
				depth--
				continue
			case c != ',' || depth > 0:
				continue
			}
		}
		if a := strings.TrimSpace(v[start:min(i, len(v))]); a != "" {
			out = append(out, a)
		}
		start = i + 1
	}
	return out
}

// declName matches a patch declaration, vN/<id>.patch.
var declName = regexp.MustCompile(`^v(\d+)/([a-z0-9][a-z0-9-]*)\.patch$`)

// notesName matches the notes of a patch in one revision, vN/<id>.notes.
var notesName = regexp.MustCompile(`^([a-z0-9][a-z0-9-]*)\.notes$`)

// decl is a patch declared once, in the folder of the first revision that
// has it: its text is a template guarded by revision.
type decl struct {
	id, src string
	tmpl    *template.Template

	// parsed are the patches its renders parsed to, by rendered text:
	// most revisions render a declaration to the same text.
	mu     sync.Mutex
	parsed map[string]*Patch
}

// loadDecls reads every vN/<id>.patch of the spec, and every
// NAME-vN/<id>.patch of its stacked series; an id declared twice is an
// error.
func (s *Spec) loadDecls() (map[string]*decl, error) {
	files, err := fs.Glob(s.fsys, "v*/*.patch")
	if err != nil {
		return nil, err
	}
	stacked, err := stackedDeclFiles(s.fsys)
	if err != nil {
		return nil, err
	}
	files = append(files, stacked...)
	out := map[string]*decl{}
	for _, f := range files {
		id, ok := declID(f)
		if !ok {
			return nil, fmt.Errorf("%s: a patch declaration is named vN/<id>.patch (or NAME-vN/<id>.patch in a stacked series), the id in lower case letters, digits and dashes", f)
		}
		if d := out[id]; d != nil {
			return nil, fmt.Errorf("patch %q is declared twice, in %s and %s: declare it once and guard what differs by revision", id, d.src, f)
		}
		data, err := fs.ReadFile(s.fsys, f)
		if err != nil {
			return nil, err
		}
		t, err := parseTemplate(f, numberLines(string(data)))
		if err != nil {
			return nil, err
		}
		out[id] = &decl{id: id, src: f, tmpl: t}
	}
	return out, nil
}

// render renders the declaration with data (a revision's, before its
// first patch) and parses the result.
func (d *decl) render(data RenderData) (*Patch, error) {
	text, err := d.execute(data)
	if err != nil {
		return nil, err
	}
	text = trimTrailingMarks(text)
	d.mu.Lock()
	p, ok := d.parsed[text]
	d.mu.Unlock()
	if !ok {
		if p, err = parsePatch(d.src, text); err != nil {
			return nil, err
		}
		p.ID = d.id
		d.mu.Lock()
		if d.parsed == nil {
			d.parsed = map[string]*Patch{}
		}
		d.parsed[text] = p
		d.mu.Unlock()
	}
	// Each revision gets its own copy: loadRevision numbers it and
	// appends the edits of the patches folded into it.
	q := *p
	q.Folded = slices.Clone(p.Folded)
	q.Edits = slices.Clone(p.Edits)
	return &q, nil
}

// execute runs the declaration's template with data. Its guards are the
// placeholder functions it was parsed with: no patch is applied while a
// revision's declarations are read.
func (d *decl) execute(data RenderData) (string, error) {
	var buf bytes.Buffer
	if err := d.tmpl.Execute(&buf, data); err != nil {
		if data.Stack != "" {
			return "", fmt.Errorf("rendering %s for %s v%d on v%d: %w", d.src, data.Stack, data.StackVersion, data.Version, err)
		}
		return "", fmt.Errorf("rendering %s for v%d: %w", d.src, data.Version, err)
	}
	return buf.String(), nil
}
