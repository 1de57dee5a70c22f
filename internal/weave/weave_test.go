package weave

import (
	"strings"
	"testing"
	"text/template"
)

// render evaluates a woven template after step versions (1-based) the way
// package spec does, with the same guard functions and control lines.
func render(t *testing.T, tmpl string, ids []string, step int) string {
	t.Helper()
	pos := map[string]int{}
	for i, id := range ids {
		pos[id] = i + 1
	}
	applied := func(id string) bool { return pos[id] <= step }
	var lines []string
	for _, l := range strings.SplitAfter(tmpl, "\n") {
		if strings.HasPrefix(l, "{{") && strings.HasSuffix(l, "}}\n") {
			l = strings.TrimSuffix(l, "\n")
		}
		lines = append(lines, l)
	}
	tp := template.Must(template.New("").Funcs(template.FuncMap{
		"created": func(string) string { return "" },
		"since":   applied,
		"before":  func(id string) bool { return !applied(id) },
		"between": func(a, b string) bool { return applied(a) && !applied(b) },
	}).Parse(strings.Join(lines, "")))
	var b strings.Builder
	if err := tp.Execute(&b, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWeaveRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		versions []string
	}{
		{"unchanged", []string{"a\nb\n", "a\nb\n"}},
		{"insert", []string{"a\nc\n", "a\nb\nc\n"}},
		{"replace then delete", []string{"a\n\tb\nc\n", "a\n\tB\nc\n", "a\nc\n"}},
		{"indented and blank lines", []string{"{\n\tx;\n\n}\n", "{\n\tx;\n\n\ty;\n\n}\n", "{\n\n\ty;\n}\n"}},
		{"line born and removed later", []string{"1\n", "1\n2\n", "1\n2\n3\n", "1\n3\n"}},
		{"template braces in C", []string{"a = {{0}};\n", "a = {{1}};\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var vs []Version
			var ids []string
			for i, c := range tt.versions {
				id := string(rune('a' + i))
				vs = append(vs, Version{ID: id, Content: c})
				ids = append(ids, id)
			}
			tmpl, err := Weave(vs)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tt.versions {
				if got := render(t, tmpl, ids, i+1); got != want {
					t.Errorf("after %d: got %q, want %q\ntemplate:\n%s", i+1, got, want, tmpl)
				}
			}
		})
	}
}

func TestWeaveRejectsMissingFinalNewline(t *testing.T) {
	if _, err := Weave([]Version{{"a", "x\n"}, {"b", "x\ny"}}); err == nil {
		t.Error("a version without a final newline was accepted")
	}
}
