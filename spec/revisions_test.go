package spec_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"kpatch/spec"
)

// revisionsFS is a spec with two revisions: v2 drops patch "b", adds "c"
// and changes what patch "a" writes.
func revisionsFS() fstest.MapFS {
	hdr := func(v, base string) string {
		return "Version: " + v + "\nBase: " + base + "\nSubject: s\nFrom: A <a@example.org>\nDate: Mon, 30 Jun 2025 20:53:21 -0400\n"
	}
	patch := func(subj string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("Author: A <a@example.org>\nSubject: " + subj + "\n\nMessage.\n")}
	}
	return fstest.MapFS{
		"files/f.c.tmpl": {Data: []byte(`{{created "a"}}
{{if lt .Version 2}}
one
{{else}}
uno
{{end}}
{{if since "b"}}
b
{{end}}
{{if since "c"}}
c
{{end}}
{{if before "c"}}
no c
{{end}}
`)},
		"v1/series":  {Data: []byte(hdr("1", "v1.0") + "\ncover 1\n")},
		"v1/order":   {Data: []byte("a\nb\n")},
		"v1/a.patch": patch("A"),
		"v1/b.patch": patch("B"),
		"v2/series":  {Data: []byte(hdr("2", "v1.1") + "\ncover 2\n")},
		"v2/order":   {Data: []byte("a\nc # b is dropped\n")},
		"v2/c.patch": patch("C"),
	}
}

func TestRevisionsDiffer(t *testing.T) {
	s, err := spec.Load(revisionsFS())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		version, step int
		want          string
	}{
		{1, 1, "one\nno c\n"},
		{1, 2, "one\nb\nno c\n"},
		{2, 1, "uno\nno c\n"},
		{2, 2, "uno\nc\n"},
	}
	for _, tc := range tests {
		r, err := s.Revision(tc.version)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := r.Render("f.c", tc.step)
		if err != nil || !ok {
			t.Fatalf("v%d step %d: %v %v", tc.version, tc.step, ok, err)
		}
		if string(got) != tc.want {
			t.Errorf("v%d step %d: got %q, want %q", tc.version, tc.step, got, tc.want)
		}
	}
	r, _ := s.Revision(0)
	if r.Version != 2 || r.Cover != "cover 2\n" {
		t.Errorf("newest: v%d cover %q", r.Version, r.Cover)
	}
}

func TestUnknownIDStillFails(t *testing.T) {
	fsys := revisionsFS()
	fsys["files/g.c.tmpl"] = &fstest.MapFile{Data: []byte("{{created \"a\"}}\n{{if since \"zz\"}}\nx\n{{end}}\n")}
	// Found when the spec is loaded, in a branch no revision renders too.
	if _, err := spec.Load(fsys); err == nil || !strings.Contains(err.Error(), `files/g.c.tmpl:2:9: unknown patch id "zz"`) {
		t.Errorf("got %v, want an unknown patch id error at g.c.tmpl:2", err)
	}
}
