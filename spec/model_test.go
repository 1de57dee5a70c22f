package spec_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"kpatch/spec"
)

// modelFS is a spec in the declared-once model: v1 has a, b and c; v2 folds
// b into a, drops c, adds d, and changes what a writes and its subject.
func modelFS() fstest.MapFS {
	hdr := func(v string) string {
		return "Version: " + v + "\nSubject: s\nFrom: A <a@example.org>\nDate: Mon, 30 Jun 2025 20:53:21 -0400\n\ncover " + v + "\n"
	}
	return fstest.MapFS{
		"files/f.c.tmpl": {Data: []byte("{{created \"a\"}}\n{{if since \"b\"}}\nb\n{{end}}\n{{if since \"c\"}}\nc\n{{end}}\n{{if since \"d\"}}\nd\n{{end}}\n")},
		"v1/series":      {Data: []byte(hdr("1"))},
		"v1/order":       {Data: []byte("a\nb\nc\n")},
		"v1/a.patch": {Data: []byte(`Author: A <a@example.org>
Subject: {{if lt .Version 2}}Add a{{else}}Add a with b{{end}}

Message of a.
=== edits
@ x.c: line-after "one"
+a
{{if ge .Version 2}}

@ x.c: line-after "two"
+a2
{{end}}
`)},
		"v1/b.patch": {Data: []byte("Author: B <b@example.org>\nSubject: Add b\n\nMessage of b.\n=== edits\n@ y.c: line-after \"one\"\n+b\n")},
		"v1/c.patch": {Data: []byte("Author: A <a@example.org>\nSubject: Add c\n\nMessage of c.\n")},
		"v1/c.notes": {Data: []byte("Changes since v0:\n- c\n")},
		"v2/series":  {Data: []byte(hdr("2"))},
		"v2/order":   {Data: []byte("a + b   # folded\nd\n")},
		"v2/d.patch": {Data: []byte("Author: A <a@example.org>\nSubject: Add d\n\nMessage of d.\n")},
		"v2/a.notes": {Data: []byte("\nChanges since v1:\n- fold b\n")},
	}
}

func TestModelFoldsDropsAndNewPatches(t *testing.T) {
	s, err := spec.Load(modelFS())
	if err != nil {
		t.Fatal(err)
	}
	v1, _ := s.Revision(1)
	v2, _ := s.Revision(2)
	if len(v1.Patches) != 3 || len(v2.Patches) != 2 {
		t.Fatalf("v1 has %d patches, v2 %d", len(v1.Patches), len(v2.Patches))
	}
	a1, a2 := v1.Patches[0], v2.Patches[0]
	if a1.Subject != "Add a" || a2.Subject != "Add a with b" || strings.Join(a2.Folded, ",") != "b" {
		t.Errorf("subjects %q %q, folded %q", a1.Subject, a2.Subject, a2.Folded)
	}
	// v2's a: its own two edits and b's, in that order, each naming its line.
	var got []string
	for _, e := range a2.Edits {
		got = append(got, e.Path+"="+strings.TrimSpace(e.Text)+"@"+e.Src)
	}
	if want := "x.c=a@v1/a.patch:6 x.c=a2@v1/a.patch:10 y.c=b@v1/b.patch:6"; strings.Join(got, " ") != want {
		t.Errorf("v2 patch 1 edits %q, want %q", strings.Join(got, " "), want)
	}
	if len(a1.Edits) != 1 {
		t.Errorf("v1's a has %d edits, want 1", len(a1.Edits))
	}
	if a1.Changelog != "" || a2.Changelog != "Changes since v1:\n- fold b\n" || v1.Patches[2].Changelog != "Changes since v0:\n- c\n" {
		t.Errorf("notes: %q %q %q", a1.Changelog, a2.Changelog, v1.Patches[2].Changelog)
	}
	// The folded b counts as applied with patch 1; the dropped c never is.
	for _, tc := range []struct {
		r    *spec.Revision
		step int
		want string
	}{{v1, 1, ""}, {v1, 2, "b\n"}, {v1, 3, "b\nc\n"}, {v2, 1, "b\n"}, {v2, 2, "b\nd\n"}} {
		out, ok, err := tc.r.Render("f.c", tc.step)
		if err != nil || !ok || string(out) != tc.want {
			t.Errorf("v%d step %d: %q %v %v, want %q", tc.r.Version, tc.step, out, ok, err, tc.want)
		}
	}
}

// Every way to get the model wrong is refused at load, with the file and
// line that says so.
func TestModelRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(fstest.MapFS)
		want string
	}{
		{"guard naming no revision", func(f fstest.MapFS) {
			f["v1/c.patch"] = &fstest.MapFile{Data: []byte("Author: A <a@example.org>\nSubject: Add c\n\nMessage.\n{{if ge .Version 3}}\nmore\n{{end}}\n")}
		}, `v1/c.patch:5:`},
		{"template guard naming no revision", func(f fstest.MapFS) {
			f["files/g.c.tmpl"] = &fstest.MapFile{Data: []byte("{{created \"a\"}}\nx\n{{if lt 4 .Version}}\ny\n{{end}}\n")}
		}, `files/g.c.tmpl:3:`},
		{"edit section typo", func(f fstest.MapFS) {
			f["v1/c.patch"] = &fstest.MapFile{Data: []byte("Author: A <a@example.org>\nSubject: Add c\n\nMessage.\n=== edit\n@ x.c: line-after \"one\"\n+c\n")}
		}, `v1/c.patch:5: unknown section line "=== edit"`},
		{"notes in a declaration", func(f fstest.MapFS) {
			f["v1/c.patch"] = &fstest.MapFile{Data: []byte("Author: A <a@example.org>\nSubject: Add c\n\nMessage.\n---\nnotes\n")}
		}, `v1/c.patch:5: the notes below "---" belong to one revision`},
		{"patch declared twice", func(f fstest.MapFS) { f["v2/c.patch"] = f["v1/c.patch"] }, `patch "c" is declared twice`},
		{"order names an undeclared patch", func(f fstest.MapFS) { f["v2/order"] = &fstest.MapFile{Data: []byte("a\ne\n")} }, `v2/order: patch "e" is not declared`},
		{"patch listed twice", func(f fstest.MapFS) { f["v2/order"] = &fstest.MapFile{Data: []byte("a + b\nb\n")} }, `listed twice`},
		{"declaration no revision uses", func(f fstest.MapFS) { f["v2/e.patch"] = f["v2/d.patch"] }, `no revision's order lists patch "e"`},
		{"notes of a patch the revision lacks", func(f fstest.MapFS) { f["v2/c.notes"] = f["v1/c.notes"] }, `v2/c.notes: v2 has no patch "c"`},
		{"unknown file", func(f fstest.MapFS) { f["v2/01-d.patch.orig"] = f["v2/d.patch"] }, `unknown file in a revision folder`},
		{"missing order", func(f fstest.MapFS) { delete(f, "v2/order") }, `v2/order is missing`},
		{"a temporary file of an interrupted trailers run", func(f fstest.MapFS) { f["v1/.c.patch.kpatch-tmp-2041"] = f["v1/c.patch"] },
			`v1/.c.patch.kpatch-tmp-2041: a temporary file an interrupted kpatch trailers run left: run kpatch trailers on the copy again`},
		{"no files folder", func(f fstest.MapFS) { delete(f, "files/f.c.tmpl") }, `no files/ folder (the templates of the files the series creates): not a series description; kpatch spec -o DIR writes a complete one`},
		{"no revision", func(f fstest.MapFS) {
			for p := range f {
				if strings.HasPrefix(p, "v") {
					delete(f, p)
				}
			}
		}, `no v*/series file (a revision): not a series description; kpatch spec -o DIR writes a complete one`},
		{"nothing", func(f fstest.MapFS) {
			for p := range f {
				delete(f, p)
			}
		}, `no files/ folder and no v*/series file: not a series description; kpatch spec -o DIR writes a complete one`},
		{"self-test cases in the series file", func(f fstest.MapFS) {
			f["v2/series"] = &fstest.MapFile{Data: []byte(strings.Replace(string(f["v2/series"].Data), "\n\n", "\nSelftest-Cases: x\n\n", 1))}
		}, `Selftest-Cases is no longer read: name the cases in facts/selftest.tmpl`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := modelFS()
			tc.edit(f)
			_, err := spec.Load(f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
			if !errors.Is(err, spec.ErrInvalid) {
				t.Errorf("%v is not spec.ErrInvalid", err)
			}
		})
	}
}

// An error in a template names its line in the file, however many lines
// that hold only a control action come before it (they were once joined
// away, shifting the line numbers: line 12 reported as 8).
func TestTemplateErrorNamesFileLine(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "late-error.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	f := modelFS()
	f["files/late.c.tmpl"] = &fstest.MapFile{Data: src}
	s, err := spec.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := s.Revision(1)
	_, _, err = r.Render("late.c", 3)
	want := "files/late.c.tmpl:12:"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want the error at %s", err, want)
	}
}
