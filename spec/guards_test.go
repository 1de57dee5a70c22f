package spec

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"text/template"

	"kpatch/templates/linux"
)

// slowRender renders f after step patches of r with text/template alone.
func slowRender(r *Revision, f *File, step int) ([]byte, int, error) {
	return r.executeTemplate(&File{Path: f.Path, Src: f.Src, tmpl: f.tmpl}, step)
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
		if d.prog() == nil {
			t.Errorf("%s: the guard evaluator cannot run it", d.src)
			continue
		}
		for _, r := range s.Revisions {
			fast, err := d.execute(r.Version)
			if err != nil {
				t.Fatalf("%s for v%d: %v", id, r.Version, err)
			}
			var buf bytes.Buffer
			if err := d.tmpl.Execute(&buf, RenderData{Version: r.Version}); err != nil {
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
			var want bytes.Buffer
			wantErr := tmpl.Funcs(map[string]any{
				"created": func(id string) (string, error) { createdAt = id; return "", nil },
				"since":   look,
				"before":  func(id string) (bool, error) { ok, err := look(id); return !ok, err },
				"between": func(a, b string) (bool, error) {
					okA, err := look(a)
					if err != nil {
						return false, err
					}
					okB, err := look(b)
					return okA && !okB, err
				},
			}).Execute(&want, data)
			wantAsked, wantCreated := asked, createdAt
			p := compileProgram(tmpl)
			if (p == nil) != tc.noProg {
				t.Fatalf("program: got %v, want none: %v", p != nil, tc.noProg)
			}
			if p == nil {
				return
			}
			asked, createdAt = nil, ""
			got, err := p.run(data, guardFuncs{applied: look, created: func(id string) error { createdAt = id; return nil }})
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
