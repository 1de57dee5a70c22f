package spec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// Spec is a parsed series description.
type Spec struct {
	fsys      fs.FS
	Revisions []*Revision      // in version order
	Templates map[string]*File // created files by path in the tree
}

// File is the template of one file the series creates.
type File struct {
	Path string // path in the kernel tree
	Src  string // path in the spec
	tmpl *template.Template
}

// Revision is one posted version of the series.
type Revision struct {
	Version         int
	Base            string
	Subject         string
	From            string
	Date            time.Time
	MessageIDDomain string
	ChangeID        string
	To, Cc          []string
	SelftestCases   []string // self-test cases beyond the default list that this revision must pass
	Cover           string   // the cover letter text
	Patches         []*Patch
	spec            *Spec
}

// Patch is the description of one patch of a revision.
type Patch struct {
	Number    int
	ID        string
	Author    string
	Subject   string
	Log       string // commit message with trailers, ending in a newline
	Changelog string // the notes below "---", "" if none
	Edits     []Edit
	Src       string // the description's path in the spec
}

// Edit is one edit to a file that exists in the kernel tree, placed by
// what it attaches to (see package hooks).
type Edit struct {
	Path string   // file in the tree
	Op   string   // operation name
	Args []string // operation arguments
	Text string   // text to insert, "" for operations that insert nothing
	Src  string   // where the edit is written: "v11/01-user-api.patch:42"
}

// ErrNoRevision is returned by Revision for a version the spec lacks.
var ErrNoRevision = errors.New("no such revision in the series description")

// Load reads a spec from fsys.
func Load(fsys fs.FS) (*Spec, error) {
	s := &Spec{fsys: fsys, Templates: map[string]*File{}}
	err := fs.WalkDir(fsys, "files", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".tmpl") {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		tp := strings.TrimSuffix(strings.TrimPrefix(p, "files/"), ".tmpl")
		t, err := template.New(p).Option("missingkey=error").Funcs(placeholderFuncs).Parse(joinControlLines(string(data)))
		if err != nil {
			return fmt.Errorf("spec: %w", err)
		}
		s.Templates[tp] = &File{Path: tp, Src: p, tmpl: t}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("spec: reading templates: %w", err)
	}
	dirs, err := fs.Glob(fsys, "v*/series")
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("spec: no v*/series file: not a series description")
	}
	for _, d := range dirs {
		r, err := s.loadRevision(path.Dir(d))
		if err != nil {
			return nil, err
		}
		s.Revisions = append(s.Revisions, r)
	}
	sort.Slice(s.Revisions, func(i, j int) bool { return s.Revisions[i].Version < s.Revisions[j].Version })
	return s, nil
}

// Revision returns revision v, or the newest when v is 0.
func (s *Spec) Revision(v int) (*Revision, error) {
	if v == 0 {
		return s.Revisions[len(s.Revisions)-1], nil
	}
	for _, r := range s.Revisions {
		if r.Version == v {
			return r, nil
		}
	}
	var have []string
	for _, r := range s.Revisions {
		have = append(have, "v"+strconv.Itoa(r.Version))
	}
	return nil, fmt.Errorf("v%d: %w (it has %s)", v, ErrNoRevision, strings.Join(have, ", "))
}

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

var patchName = regexp.MustCompile(`^(\d+)-([a-z0-9][a-z0-9-]*)\.patch$`)

func (s *Spec) loadRevision(dir string) (*Revision, error) {
	src := dir + "/series"
	data, err := fs.ReadFile(s.fsys, src)
	if err != nil {
		return nil, err
	}
	r := &Revision{spec: s}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	err = parseHeader(sc, src, &line, func(k, v string) error {
		var err error
		switch k {
		case "Version":
			r.Version, err = strconv.Atoi(v)
		case "Base":
			r.Base = v
		case "Subject":
			r.Subject = v
		case "From":
			r.From = v
		case "Date":
			r.Date, err = time.Parse(time.RFC1123Z, v)
		case "Message-Id-Domain":
			r.MessageIDDomain = v
		case "Change-Id":
			r.ChangeID = v
		case "To":
			r.To = append(r.To, splitList(v)...)
		case "Cc":
			r.Cc = append(r.Cc, splitList(v)...)
		case "Selftest-Cases":
			r.SelftestCases = append(r.SelftestCases, splitList(v)...)
		default:
			return fmt.Errorf("unknown field %q", k)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if r.Version == 0 || r.Subject == "" || r.From == "" || r.Date.IsZero() {
		return nil, fmt.Errorf("spec: %s: Version, Subject, From and Date are required", src)
	}
	_, cover, _ := bytes.Cut(data, []byte("\n\n"))
	r.Cover = string(cover)

	ents, err := fs.ReadDir(s.fsys, dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		m := patchName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		p, err := s.loadPatch(dir+"/"+e.Name(), n, m[2])
		if err != nil {
			return nil, err
		}
		r.Patches = append(r.Patches, p)
	}
	sort.Slice(r.Patches, func(i, j int) bool { return r.Patches[i].Number < r.Patches[j].Number })
	seen := map[string]bool{}
	for i, p := range r.Patches {
		if p.Number != i+1 {
			return nil, fmt.Errorf("spec: %s: patch %d is missing (found %s)", dir, i+1, p.Src)
		}
		if seen[p.ID] {
			return nil, fmt.Errorf("spec: %s: two patches have the id %q", dir, p.ID)
		}
		seen[p.ID] = true
	}
	if len(r.Patches) == 0 {
		return nil, fmt.Errorf("spec: %s: no NN-id.patch files", dir)
	}
	return r, nil
}

func (s *Spec) loadPatch(src string, n int, id string) (*Patch, error) {
	data, err := fs.ReadFile(s.fsys, src)
	if err != nil {
		return nil, err
	}
	p := &Patch{Number: n, ID: id, Src: src}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	err = parseHeader(sc, src, &line, func(k, v string) error {
		switch k {
		case "Author":
			p.Author = v
		case "Subject":
			p.Subject = v
		default:
			return fmt.Errorf("unknown field %q", k)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if p.Author == "" || p.Subject == "" {
		return nil, fmt.Errorf("spec: %s: Author and Subject are required", src)
	}
	var log, changelog strings.Builder
	cur := &log
	inEdits := false
	var e *Edit
	for sc.Scan() {
		line++
		l := sc.Text()
		switch {
		case inEdits:
			switch {
			case strings.HasPrefix(l, "@ "):
				ed, err := parseEditLine(l[2:])
				if err != nil {
					return nil, fmt.Errorf("spec: %s:%d: %w", src, line, err)
				}
				ed.Src = fmt.Sprintf("%s:%d", src, line)
				p.Edits = append(p.Edits, ed)
				e = &p.Edits[len(p.Edits)-1]
			case strings.HasPrefix(l, "+"):
				if e == nil {
					return nil, fmt.Errorf("spec: %s:%d: text before the first \"@ PATH: OP\" line", src, line)
				}
				e.Text += l[1:] + "\n"
			case l == "" || strings.HasPrefix(l, "#"):
			default:
				return nil, fmt.Errorf("spec: %s:%d: an edit line starts with \"@ \" or \"+\", got %q", src, line, l)
			}
		case l == "=== edits":
			inEdits = true
		case l == "---" && cur == &log:
			cur = &changelog
		default:
			cur.WriteString(l + "\n")
		}
	}
	p.Log = log.String()
	p.Changelog = strings.TrimLeft(changelog.String(), "\n")
	if strings.TrimSpace(p.Log) == "" {
		return nil, fmt.Errorf("spec: %s: empty commit message", src)
	}
	return p, nil
}

// parseEditLine parses "PATH: OP ARG..." where arguments are separated by
// spaces and may be double-quoted.
func parseEditLine(s string) (Edit, error) {
	p, rest, ok := strings.Cut(s, ": ")
	if !ok || p == "" {
		return Edit{}, fmt.Errorf("want \"@ PATH: OP ARGS\", got %q", "@ "+s)
	}
	var words []string
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] == '"' {
			w, n, err := unquotePrefix(rest)
			if err != nil {
				return Edit{}, err
			}
			words = append(words, w)
			rest = rest[n:]
			continue
		}
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			i = len(rest)
		}
		words = append(words, rest[:i])
		rest = rest[i:]
	}
	if len(words) == 0 {
		return Edit{}, fmt.Errorf("no operation after %q", p+":")
	}
	return Edit{Path: p, Op: words[0], Args: words[1:]}, nil
}

func unquotePrefix(s string) (string, int, error) {
	for i := 1; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == '"' {
			w, err := strconv.Unquote(s[:i+1])
			return w, i + 1, err
		}
	}
	return "", 0, fmt.Errorf("unterminated quote in %q", s)
}

// controlLine matches a line that holds nothing but one control action.
var controlLine = regexp.MustCompile(`^\{\{-?\s*(if|else|end|range|with|define|block|created|/\*)\b[^\n]*\}\}\n`)

// joinControlLines removes the newline after every line that holds only a
// control action ({{if}}, {{else}}, {{end}}, {{created}}, a comment, ...),
// so such lines leave nothing in the output, while whitespace around the
// code lines (tabs, blank lines) is kept exactly as written.
func joinControlLines(src string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(src, "\n") {
		if controlLine.MatchString(l) && strings.Count(l, "{{") == 1 {
			l = strings.TrimSuffix(l, "\n")
		}
		b.WriteString(l)
	}
	return b.String()
}
