package weave

import (
	"strings"
	"testing"
	"text/template"
)

// renderRev evaluates a template woven over revisions for revision r after
// step patches, with package spec's guard semantics: a patch the revision
// does not have is never applied.
func renderRev(t *testing.T, tmpl string, r Rev, step int) string {
	t.Helper()
	pos := map[string]int{}
	for i, id := range r.IDs {
		pos[id] = i + 1
	}
	for _, id := range r.Folded {
		pos[id] = 1 // the tests fold into the first patch
	}
	applied := func(id string) bool { n := pos[id]; return n != 0 && n <= step }
	var lines []string
	for _, l := range strings.SplitAfter(tmpl, "\n") {
		if strings.HasPrefix(l, "{{") && strings.HasSuffix(l, "}}\n") && strings.Count(l, "{{") == 1 {
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
	if err := tp.Execute(&b, struct{ Version int }{r.Version}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Three revisions of one file: v2 changes a line and drops patch b, v3
// folds b back into a and adds c. Every revision renders every state, and
// lines the revisions share are written once.
func TestRevisionsRoundTrip(t *testing.T) {
	revs := []Rev{
		{Version: 1, IDs: []string{"a", "b"}, Created: 1, States: []string{"one\ntwo\n", "one\ntwo\nbee\n"}},
		{Version: 2, IDs: []string{"a"}, Created: 1, States: []string{"one\n2\n"}},
		{Version: 3, IDs: []string{"a", "c"}, Folded: []string{"b"}, Created: 1, States: []string{"one\n2\nbee\n", "one\n2\nbee\nsee\n"}},
		{Version: 4, IDs: []string{"x"}}, // lacks the file
	}
	tmpl, err := Revisions(revs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range revs[:3] {
		for k, want := range r.States {
			if got := renderRev(t, tmpl, r, r.Created+k); got != want {
				t.Errorf("v%d after patch %d: %q, want %q\ntemplate:\n%s", r.Version, r.Created+k, got, want, tmpl)
			}
		}
	}
	if n := strings.Count(tmpl, "one\n"); n != 1 {
		t.Errorf("the shared line is written %d times:\n%s", n, tmpl)
	}
	if !strings.HasPrefix(tmpl, "{{created \"a\"}}\n") {
		t.Errorf("template does not start with the created line:\n%s", tmpl)
	}
}

func TestRevisionsRefuses(t *testing.T) {
	if _, err := Revisions([]Rev{{Version: 1, IDs: []string{"a"}}}); err == nil {
		t.Error("no revision has the file, no error")
	}
	if _, err := Revisions([]Rev{{Version: 1, IDs: []string{"a", "b"}, Created: 1, States: []string{"x\n"}}}); err == nil {
		t.Error("one state for two steps, no error")
	}
}

func TestRevisionDirs(t *testing.T) {
	d := RevisionDirs{}
	for _, good := range []string{"13=../shared/revisions/v13", "14=a=b"} {
		if err := d.Set(good); err != nil {
			t.Errorf("Set(%q): %v", good, err)
		}
	}
	if d[13] != "../shared/revisions/v13" || d[14] != "a=b" || len(d) != 2 {
		t.Errorf("got %v", d)
	}
	for _, bad := range []string{"", "13", "x=dir", "=dir"} {
		if err := d.Set(bad); err == nil {
			t.Errorf("Set(%q) took it", bad)
		}
	}
}
