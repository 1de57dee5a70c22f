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

// TestCreatedBy: a file exists from the patch its {{created}} names on,
// also where a guard chooses that patch by revision or by the patches
// applied.
func TestCreatedBy(t *testing.T) {
	tests := []struct {
		name string
		src  string
		v    int
		want []bool // exists after patch 1, 2, ...
	}{
		{"one patch", "{{created \"b\"}}\nt\n", 1, []bool{false, true, true}},
		{"a folded patch", "{{created \"b\"}}\nt\n", 2, []bool{true, true}},
		{"by revision", "{{if lt .Version 2}}\n{{created \"c\"}}\n{{else}}\n{{created \"d\"}}\n{{end}}\nt\n", 1, []bool{false, false, true}},
		{"by revision, the other", "{{if lt .Version 2}}\n{{created \"c\"}}\n{{else}}\n{{created \"d\"}}\n{{end}}\nt\n", 2, []bool{false, true}},
		{"by the patches applied", "{{if since \"b\"}}\n{{created \"b\"}}\n{{else}}\n{{created \"c\"}}\n{{end}}\nt\n", 1, []bool{false, true, true}},
		{"first, and again under a guard", "{{created \"c\"}}\n{{- if since \"b\"}}{{created \"b\"}}{{end -}}\nt\n", 1, []bool{false, true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := modelFS()
			f["files/t.c.tmpl"] = &fstest.MapFile{Data: []byte(tc.src)}
			s, err := spec.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := s.Revision(tc.v)
			for i, want := range tc.want {
				out, ok, err := r.Render("t.c", i+1)
				if err != nil || ok != want || ok && string(out) != "t\n" {
					t.Errorf("v%d after patch %d: %q exists %v (%v), want exists %v", tc.v, i+1, out, ok, err, want)
				}
			}
		})
	}
}
