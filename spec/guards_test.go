package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"text/template"

	"kpatch/templates/linux"
)

// slowRender renders f after step patches of r with text/template alone.
func slowRender(r *Revision, f *File, step int) ([]byte, int, error) {
	return r.executeTemplate(&File{Path: f.Path, Src: f.Src, tmpl: &parsedTemplate{tmpl: f.tmpl.tmpl}}, step)
}

// TestProgramsRenderAsTextTemplate renders every template and facts file
// of the built-in series at every patch of every revision (the main
// revisions, the stacked series, and the stacked series laid on each other
// main revision that allows it) with the guard evaluator and with
// text/template, and every patch declaration for every revision, and
// wants the same bytes and the same {{created}} step. Every built-in
// template must compile for the evaluator: one that fell back to
// text/template would pass unnoticed otherwise.
func TestProgramsRenderAsTextTemplate(t *testing.T) {
	s, err := Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	revs := append([]*Revision{}, s.Revisions...)
	for _, st := range s.Stacked {
		revs = append(revs, st)
		for _, m := range s.Revisions {
			if on, err := st.On(m.Version); err == nil && on != st {
				revs = append(revs, on)
			}
		}
	}
	files := map[string]*File{}
	for p, f := range s.Templates {
		files["files/"+p] = f
	}
	for n, f := range s.Facts {
		files["facts/"+n] = f
	}
	renders := 0
	for name, f := range files {
		if f.program() == nil {
			t.Errorf("%s: the guard evaluator cannot run it", name)
			continue
		}
		for _, r := range revs {
			for step := 0; step <= len(r.Patches); step++ {
				fast, fastCreated, err := r.executeTemplate(f, step)
				if err != nil {
					t.Fatalf("%s, %s after patch %d: %v", name, r.Name(), step, err)
				}
				slow, slowCreated, err := slowRender(r, f, step)
				if err != nil {
					t.Fatalf("%s, %s after patch %d, text/template: %v", name, r.Name(), step, err)
				}
				if !bytes.Equal(fast, slow) || fastCreated != slowCreated {
					t.Errorf("%s, %s after patch %d: the evaluator wrote %d bytes (created at %d), text/template %d (created at %d)",
						name, r.Name(), step, len(fast), fastCreated, len(slow), slowCreated)
				}
				renders++
			}
		}
	}
	for id, d := range s.decls {
		if d.tmpl.prog() == nil {
			t.Errorf("%s: the guard evaluator cannot run it", d.src)
			continue
		}
		for _, r := range s.Revisions {
			fast, err := d.execute(r.Version)
			if err != nil {
				t.Fatalf("%s for v%d: %v", id, r.Version, err)
			}
			tmpl, err := d.tmpl.tmpl()
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := tmpl.Execute(&buf, RenderData{Version: r.Version}); err != nil {
				t.Fatalf("%s for v%d, text/template: %v", id, r.Version, err)
			}
			if fast != buf.String() {
				t.Errorf("%s for v%d: the evaluator and text/template differ", d.src, r.Version)
			}
			renders++
		}
	}
	if renders < 1000 {
		t.Errorf("only %d renders compared", renders)
	}
}

// TestGuardLanguage runs small templates through the evaluator and through
// text/template: what both write, which templates get no program, and
// which renders the evaluator leaves to text/template.
func TestGuardLanguage(t *testing.T) {
	applied := map[string]bool{"a": true, "b": true, "c": false}
	tests := []struct {
		name     string
		src      string
		noProg   bool // outside the language
		fallback bool // compiled, but the render is text/template's
	}{
		{name: "text", src: "plain\ntext\n"},
		{name: "since", src: `{{if since "a"}}A{{end}}{{if since "c"}}C{{end}}`},
		{name: "before", src: `{{if before "a"}}A{{else}}not A{{end}}`},
		{name: "between", src: `{{if between "a" "c"}}ac{{end}}{{if between "a" "b"}}ab{{end}}`},
		{name: "else if", src: `{{if since "c"}}c{{else if since "b"}}b{{else}}none{{end}}`},
		{name: "version", src: `{{if and (ge .Version 13) (lt .Version 15)}}13-14{{end}}{{if eq .Version 11 14}}11 or 14{{end}}`},
		{name: "ne le gt", src: `{{if ne .Version 14}}ne{{end}}{{if le .Version 14}}le{{end}}{{if gt .Version 13}}gt{{end}}`},
		{name: "not or", src: `{{if not (or (since "c") (lt .Version 12))}}yes{{end}}`},
		{name: "and value", src: `{{and .Version .Step}} {{or 0 .Patch}}`},
		{name: "fields", src: `v{{.Version}} step {{.Step}} patch {{.Patch}} {{since "a"}}`},
		{name: "created", src: "{{created \"b\"}}\nbody\n"},
		{name: "strings", src: `{{if eq .Patch "x"}}x{{end}}{{if lt "a" "b"}}lt{{end}}`},
		{name: "bools", src: `{{if eq (since "a") true}}t{{end}}{{if ne (since "c") false}}f{{end}}`},
		{name: "comment", src: "a{{/* gone */}}b"},
		{name: "trim", src: "a  {{- if since \"a\" -}}  b  {{- end}}"},
		// and/or stop at the deciding argument: the unknown id is never asked.
		{name: "short circuit", src: `{{if and (lt .Version 11) (since "unknown")}}x{{end}}{{if or (ge .Version 11) (since "unknown")}}y{{end}}`},
		{name: "unknown id", src: `{{if since "unknown"}}x{{end}}`, fallback: true},
		{name: "mixed types", src: `{{if lt .Version "14"}}x{{end}}`, fallback: true},
		{name: "ordered bools", src: `{{if lt true false}}x{{end}}`, fallback: true},
		{name: "range", src: `{{range .Patch}}x{{end}}`, noProg: true},
		{name: "with", src: `{{with .Patch}}{{.}}{{end}}`, noProg: true},
		{name: "variable", src: `{{$v := .Version}}{{$v}}`, noProg: true},
		{name: "pipeline", src: `{{.Version | printf "%d"}}`, noProg: true},
		{name: "other function", src: `{{printf "%d" .Version}}`, noProg: true},
		{name: "dot", src: `{{.}}`, noProg: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := template.New(tc.name).Funcs(map[string]any{
				"created": func(string) (string, error) { return "", nil },
				"since":   func(string) (bool, error) { return false, nil },
				"before":  func(string) (bool, error) { return false, nil },
				"between": func(string, string) (bool, error) { return false, nil },
			}).Parse(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			data := RenderData{Version: 14, Step: 3, Patch: "b"}
			var asked []string
			look := func(id string) (bool, error) {
				asked = append(asked, id)
				v, ok := applied[id]
				if !ok {
					return false, errors.New("unknown patch id " + id)
				}
				return v, nil
			}
			createdAt := ""
			fns := guardFuncs{applied: look, created: func(id string) error { createdAt = id; return nil }}
			var want bytes.Buffer
			wantErr := tmpl.Funcs(fns.templateFuncs()).Execute(&want, data)
			wantAsked, wantCreated := asked, createdAt
			p := compileProgram(tmpl)
			if (p == nil) != tc.noProg {
				t.Fatalf("program: got %v, want none: %v", p != nil, tc.noProg)
			}
			if p == nil {
				return
			}
			asked, createdAt = nil, ""
			got, err := p.run(data, fns)
			if tc.fallback {
				if err == nil {
					t.Fatalf("the evaluator rendered %q; want it to leave the render to text/template (which says %v)", got, wantErr)
				}
				if wantErr == nil {
					t.Errorf("text/template rendered it (%q): the evaluator should have", want.String())
				}
				return
			}
			if wantErr != nil {
				t.Fatalf("text/template: %v", wantErr)
			}
			if err != nil {
				t.Fatalf("evaluator: %v", err)
			}
			if string(got) != want.String() {
				t.Errorf("evaluator wrote %q, text/template %q", got, want.String())
			}
			if strings.Join(asked, ",") != strings.Join(wantAsked, ",") || createdAt != wantCreated {
				t.Errorf("evaluator asked %v (created %q), text/template %v (created %q)", asked, createdAt, wantAsked, wantCreated)
			}
		})
	}
}

// TestGuardParserAsTextTemplate parses every template, fact and
// declaration of the built-in series with the guard parser and wants the
// program compileProgram makes of text/template's tree of it; then the
// same for generated templates, and for templates outside the language or
// wrong, which the guard parser must leave to text/template.
func TestGuardParserAsTextTemplate(t *testing.T) {
	var sources []string
	err := fs.WalkDir(linux.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(linux.FS, p)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(p, ".tmpl"):
			sources = append(sources, joinControlLines(string(data)))
		case strings.HasSuffix(p, ".patch"):
			sources = append(sources, joinControlLines(numberLines(string(data))))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) < 30 {
		t.Fatalf("only %d templates found", len(sources))
	}
	for i, src := range sources {
		checkGuardParse(t, fmt.Sprint("built-in ", i), src, true)
	}
	for _, tc := range []struct {
		src    string
		accept bool
	}{
		{"plain text\n", true},
		{`{{if since "a"}}A{{else if before "b"}}B{{else}}C{{end}}`, true},
		{"a  {{- if lt .Version 14 -}}  b  {{- end -}}\n\n c", true},
		{"a {{- /* comment\nover lines */ -}} b{{/**/}}c", true},
		{`{{if or (and (ge .Version 13) (le .Version 14)) (not (since "x"))}}y{{end}}`, true},
		{`{{if eq .Version 11 12 14}}y{{end}}{{.Step}}{{.Patch}}{{created "id"}}`, true},
		{"{{if   since   `raw`   }}y{{end   }}", true},
		{`{{if eq .Patch "a\"}}b"}}y{{end}}`, true},
		{`{{if (since "a")}}y{{end}}{{true}}{{false}}{{0}}`, true},
		{`{{if since "a"}}y{{ end }}`, true},
		// Outside the language, or wrong: text/template's.
		{`{{if since "a"}}y`, false},
		{`{{end}}`, false},
		{`{{else}}`, false},
		{`{{if since "a"}}y{{else}}z{{else}}w{{end}}`, false},
		{`{{range .Patch}}{{end}}`, false},
		{`{{$x := .Version}}`, false},
		{`{{.Version | print}}`, false},
		{`{{printf "%d" .Version}}`, false},
		{`{{if since("a")}}y{{end}}`, false},
		{`{{if since "a"}}{{end x}}`, false},
		{`{{if lt .Version 014}}y{{end}}`, false},
		{`{{if lt .Version -1}}y{{end}}`, false},
		{`{{if lt .Version 1e2}}y{{end}}`, false},
		{"{{if since\n\"a\"}}y{{end}}", false},
		{`{{.}}`, false},
		{`{{.Version.X}}`, false},
		{`{{}}`, false},
		{`{{ /* not a comment */ }}`, false},
		{`{{/* unclosed }}`, false},
		{`{{if since "a" -}}`, false},
		{`{{-1}}`, false},
		{`{{if since 'a'}}y{{end}}`, false},
		{`{{if since "a"}}y{{else with .Patch}}z{{end}}`, false},
	} {
		checkGuardParse(t, tc.src, tc.src, tc.accept)
	}
}

// checkGuardParse parses src both ways: when the guard parser accepts it,
// text/template must parse it to the same program; accept says whether
// the guard parser must.
func checkGuardParse(t *testing.T, name, src string, accept bool) {
	t.Helper()
	fast := parseGuards(src)
	if (fast != nil) != accept {
		t.Errorf("%.60q: the guard parser accepted it: %v, want %v", name, fast != nil, accept)
	}
	if fast == nil {
		return
	}
	tmpl, err := template.New(name).Option("missingkey=error").Funcs(placeholderFuncs).Parse(src)
	if err != nil {
		t.Errorf("%.60q: the guard parser accepted what text/template refuses: %v", name, err)
		return
	}
	slow := compileProgram(tmpl)
	if slow == nil || !reflect.DeepEqual(fast.root, slow.root) {
		t.Errorf("%.60q: the guard parser's program differs from text/template's", name)
	}
}

// TestGuardParserGenerated parses generated templates of the guard
// language (trim markers, comments, spacing, nesting), and the same with
// one character changed, inserted or removed: whatever the guard parser
// accepts, text/template must parse to the same program.
func TestGuardParserGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	space := func() string { return pick("", " ", "  ", "\t") }
	var expr func(depth int) string
	expr = func(depth int) string {
		switch n := r.IntN(7); {
		case n == 0 && depth < 3:
			return pick("and", "or") + " (" + expr(depth+1) + ") (" + expr(depth+1) + ")"
		case n == 1 && depth < 3:
			return "not (" + expr(depth+1) + ")"
		case n == 2:
			return pick("lt", "le", "gt", "ge", "eq", "ne") + " .Version " + fmt.Sprint(11+r.IntN(6))
		case n == 3:
			return "between " + pick(`"a"`, "`b`", `"c\n"`) + " " + pick(`"a"`, `"d"`)
		default:
			return pick("since", "before") + " " + pick(`"a"`, `"b"`, "`c`", `"x\"y"`)
		}
	}
	open := func() string { return pick("{{", "{{- ", "{{-\t") + space() }
	closeA := func() string { return space() + pick("}}", " -}}") }
	var body func(depth int) string
	body = func(depth int) string {
		var b strings.Builder
		for range r.IntN(4) {
			switch n := r.IntN(6); {
			case n == 0 && depth < 3:
				b.WriteString(open() + "if " + expr(0) + closeA() + body(depth+1))
				if r.IntN(2) == 0 {
					b.WriteString(open() + "else" + pick("", " if "+expr(0)) + closeA() + body(depth+1))
				}
				b.WriteString(open() + "end" + closeA())
			case n == 1:
				b.WriteString(pick("{{", "{{- ") + "/*" + pick("", " c ", "\n") + "*/" + pick("}}", " -}}"))
			case n == 2:
				b.WriteString(open() + pick(".Version", ".Step", ".Patch", `created "a"`, "true", "0", "12", "("+expr(0)+")") + closeA())
			default:
				b.WriteString(pick("text", " \n ", "\t", "a {", "} b", "\x0142\x02line\n", "") + pick("", "\n", "  "))
			}
		}
		return b.String()
	}
	accepted := 0
	for i := 0; i < 400; i++ {
		src := body(0)
		if parseGuards(src) != nil {
			accepted++
		}
		checkGuardParse(t, src, src, parseGuards(src) != nil)
		for j := 0; j < 5 && len(src) > 0; j++ {
			k := r.IntN(len(src))
			var m string
			switch r.IntN(3) {
			case 0:
				m = src[:k] + src[k+1:]
			case 1:
				m = src[:k] + pick("{", "}", "-", " ", "\n", "(", ")", `"`, "x", "1", ".", "/*") + src[k:]
			default:
				m = src[:k] + pick("{", "}", "-", " ", "(", ")", `"`, "e") + src[k+1:]
			}
			checkGuardParse(t, m, m, parseGuards(m) != nil)
		}
	}
	if accepted < 300 {
		t.Errorf("the guard parser accepted %d of 400 generated templates of its language", accepted)
	}
}
