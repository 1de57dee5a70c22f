package spec_test

import (
	"testing"
	"testing/fstest"

	"kpatch/spec"
)

// TestGuardLanguage renders templates written with the guards of the spec
// (since, before, between, created, the comparisons of .Version, the fields
// of .) in the model spec: v1 has patches a, b and c; v2 folds b into a,
// drops c and adds d.
func TestGuardLanguage(t *testing.T) {
	tests := []struct {
		name string
		body string // after the {{created "a"}} line
		v    int
		step int
		want string
	}{
		{"since", `{{if since "a"}}A{{end}}{{if since "c"}}C{{end}}`, 1, 2, "A"},
		{"before", `{{if before "b"}}B{{else}}not B{{end}}`, 1, 2, "not B"},
		{"before, not yet applied", `{{if before "c"}}C{{end}}`, 1, 2, "C"},
		{"between", `{{if between "a" "c"}}ac{{end}}{{if between "a" "b"}}ab{{end}}`, 1, 2, "ac"},
		{"between, after its end", `{{if between "a" "c"}}ac{{end}}`, 1, 3, ""},
		{"else if", `{{if since "c"}}c{{else if since "b"}}b{{else}}none{{end}}`, 1, 2, "b"},
		{"and or not", `{{if and (since "a") (not (since "c"))}}x{{end}}{{if or (since "c") (lt .Version 2)}}y{{end}}`, 1, 2, "xy"},
		{"version", `{{if lt .Version 2}}old{{else}}new{{end}} {{if eq .Version 1 2}}either{{end}}`, 2, 1, "new either"},
		{"fields", `v{{.Version}} step {{.Step}} patch {{.Patch}}`, 1, 2, "v1 step 2 patch b"},
		{"control lines leave nothing", "{{if since \"a\"}}\nA\n{{else}}\nnone\n{{end}}\n\tkept\n", 1, 1, "A\n\tkept\n"},
		{"a folded patch is applied with its slot", `{{if since "b"}}b{{end}}`, 2, 1, "b"},
		{"a dropped patch is never applied", `{{if since "c"}}c{{end}}{{if before "c"}}not c{{end}}{{if between "a" "c"}}ac{{end}}`, 2, 2, "not cac"},
		{"comment", "a{{/* gone */}}b", 1, 1, "ab"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := modelFS()
			f["files/t.c.tmpl"] = &fstest.MapFile{Data: []byte("{{created \"a\"}}\n" + tc.body)}
			s, err := spec.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			r, err := s.Revision(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			out, ok, err := r.Render("t.c", tc.step)
			if err != nil || !ok || string(out) != tc.want {
				t.Errorf("v%d after patch %d: %q (exists %v, %v), want %q", tc.v, tc.step, out, ok, err, tc.want)
			}
		})
	}
}

// TestCreatedBy: a file exists from the patch its {{created}} names on.
func TestCreatedBy(t *testing.T) {
	f := modelFS()
	f["files/t.c.tmpl"] = &fstest.MapFile{Data: []byte("{{created \"b\"}}\nt\n")}
	s, err := spec.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	v1, _ := s.Revision(1)
	v2, _ := s.Revision(2)
	for _, tc := range []struct {
		r      *spec.Revision
		step   int
		exists bool
	}{{v1, 1, false}, {v1, 2, true}, {v2, 1, true}} {
		out, ok, err := tc.r.Render("t.c", tc.step)
		if err != nil || ok != tc.exists || ok && string(out) != "t\n" {
			t.Errorf("v%d after patch %d: %q exists %v (%v), want exists %v", tc.r.Version, tc.step, out, ok, err, tc.exists)
		}
	}
}
