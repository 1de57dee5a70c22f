package spec

import (
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// parsePatch parses a rendered patch declaration: "Author:" and "Subject:"
// lines (and optionally "Date:", the author date as committed), a blank
// line, the commit message, then optionally "=== edits" and the edits.
func parsePatch(src, text string) (*Patch, error) {
	p := &Patch{Src: src}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	i := 0
	next := func() (string, int, bool) {
		for i < len(lines) {
			l, n := unmark(lines[i])
			i++
			return l, n, true
		}
		return "", 0, false
	}
	for {
		l, n, ok := next()
		if !ok {
			break
		}
		if l == "" {
			break
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want \"Key: value\", got %q", src, n, l)
		}
		switch v = strings.TrimSpace(v); k {
		case "Author":
			p.Author = v
		case "Subject":
			p.Subject = v
		case "Date":
			d, err := time.Parse("Mon, 2 Jan 2006 15:04:05 -0700", v)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: Date %q: want a date as git writes it, Mon, 22 Sep 2025 15:47:00 +0200", src, n, v)
			}
			p.Date = d
		default:
			return nil, fmt.Errorf("%s:%d: unknown field %q", src, n, k)
		}
	}
	if p.Author == "" || p.Subject == "" {
		return nil, fmt.Errorf("%s: Author and Subject are required", src)
	}
	var log strings.Builder
	inEdits := false
	var e *Edit
	for {
		l, line, ok := next()
		if !ok {
			break
		}
		switch {
		case strings.HasPrefix(l, "==="):
			if l != "=== edits" || inEdits {
				return nil, fmt.Errorf("%s:%d: unknown section line %q: the edits start at a line \"=== edits\", once", src, line, l)
			}
			inEdits = true
		case inEdits:
			switch {
			case strings.HasPrefix(l, "@ "):
				ed, err := parseEditLine(l[2:])
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %w", src, line, err)
				}
				ed.Src = fmt.Sprintf("%s:%d", src, line)
				p.Edits = append(p.Edits, ed)
				e = &p.Edits[len(p.Edits)-1]
			case strings.HasPrefix(l, "+"):
				if e == nil {
					return nil, fmt.Errorf("%s:%d: text before the first \"@ PATH: OP\" line", src, line)
				}
				e.Text += l[1:] + "\n"
			case l == "" || strings.HasPrefix(l, "#"):
			default:
				return nil, fmt.Errorf("%s:%d: an edit line starts with \"@ \" or \"+\", got %q", src, line, l)
			}
		case l == "---":
			return nil, fmt.Errorf("%s:%d: the notes below \"---\" belong to one revision: write them in vN/<id>.notes", src, line)
		default:
			log.WriteString(l + "\n")
		}
	}
	p.Log = log.String()
	if strings.TrimSpace(p.Log) == "" {
		return nil, fmt.Errorf("%s: empty commit message", src)
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

// controlWords are the actions that a line may hold alone.
var controlWords = []string{"if", "else", "end", "range", "with", "define", "block", "created"}

// isControlLine reports whether l (ending in a newline) holds nothing but
// one control action ({{if}}, {{else}}, {{end}}, {{created}}, a comment, ...).
func isControlLine(l string) bool {
	if !strings.HasPrefix(l, "{{") || !strings.HasSuffix(l, "}}\n") {
		return false
	}
	in := strings.TrimPrefix(l[2:], "-")
	in = strings.TrimLeft(in, " \t")
	if strings.HasPrefix(in, "/*") {
		return true
	}
	for _, w := range controlWords {
		if rest, ok := strings.CutPrefix(in, w); ok {
			if rest == "" || !isWordByte(rest[0]) {
				return true
			}
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// parseTemplate parses a template of the spec (a created file, a fact or a
// patch declaration) with text/template and the spec's functions, after
// joinControlLines.
func parseTemplate(name, src string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(placeholderFuncs).Parse(joinControlLines(src))
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	return t, nil
}

// joinControlLines removes the newline after every line that holds only a
// control action ({{if}}, {{else}}, {{end}}, {{created}}, a comment, ...),
// so such lines leave nothing in the output, while whitespace around the
// code lines (tabs, blank lines) is kept exactly as written.
func joinControlLines(src string) string {
	var b strings.Builder
	b.Grow(len(src) + len(src)/8) // room for the comments, without regrowing
	for rest := src; rest != ""; {
		l := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			l = rest[:i+1]
		}
		rest = rest[len(l):]
		bare := l
		if strings.HasPrefix(bare, "\x01") {
			bare = trimLeadingMarks(bare)
		}
		if isControlLine(bare) && strings.Count(l, "{{") == 1 {
			// The newline goes into a comment: it leaves nothing in the
			// output, and the template's line numbers stay those of the file.
			l = strings.TrimSuffix(l, "\n") + "{{/*\n*/}}"
		}
		b.WriteString(l)
	}
	return b.String()
}
