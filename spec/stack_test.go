package spec_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"kpatch/spec"
	"kpatch/templates/linux"
)

// stackFS is a spec whose stacked series "st" (patch s) was posted on v3;
// v1 still carried s, v2 did not.
func stackFS() fstest.MapFS {
	hdr := func(v string) string {
		return "Version: " + v + "\nBase: v1.0\nSubject: s\nFrom: A <a@example.org>\nDate: Mon, 30 Jun 2025 20:53:21 -0400\n"
	}
	return fstest.MapFS{
		"files/f.c.tmpl": {Data: []byte("{{created \"a\"}}\nf\n")},
		"v1/series":      {Data: []byte(hdr("1") + "\ncover\n")},
		"v1/order":       {Data: []byte("a\ns\n")},
		"v1/a.patch":     {Data: []byte("Author: A <a@example.org>\nSubject: A\n\nMessage.\n")},
		"v1/s.patch":     {Data: []byte("Author: A <a@example.org>\nSubject: S\n\n{{if lt .Version 3}}Before v3.{{else}}From v3 on.{{end}}\n")},
		"v2/series":      {Data: []byte(hdr("2") + "\ncover\n")},
		"v2/order":       {Data: []byte("a\n")},
		"v3/series":      {Data: []byte(hdr("3") + "\ncover\n")},
		"v3/order":       {Data: []byte("a\nc\n")},
		"v3/c.patch":     {Data: []byte("Author: A <a@example.org>\nSubject: C\n\nMessage.\n")},
		"st-v1/series":   {Data: []byte(hdr("1") + "Prerequisite: v3\n\ncover\n")},
		"st-v1/order":    {Data: []byte("s\n")},
	}
}

// TestStackOn lays a stacked series on another revision than the one it
// was posted on (kpatch --stack NAME --on vN): its patches follow that
// revision's and are rendered with its guards, the posted one is left as
// it was, and a revision that has its patches already, a revision the
// spec lacks and a main-series revision are refused.
func TestStackOn(t *testing.T) {
	sp, err := spec.Load(stackFS())
	if err != nil {
		t.Fatal(err)
	}
	posted, err := sp.Stack("st", 1)
	if err != nil {
		t.Fatal(err)
	}
	on2, err := sp.Select(1, "st", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := on2.Name(); got != "st v1 on v2 (posted on v3)" || !on2.Moved() {
		t.Errorf("name %q, moved %v", got, on2.Moved())
	}
	if len(on2.Patches) != 2 || on2.Own != 1 || on2.Patches[1].ID != "s" || on2.Patches[1].Number != 2 {
		t.Fatalf("on v2: %d patches, own from %d", len(on2.Patches), on2.Own)
	}
	if !strings.Contains(on2.Patches[1].Log, "Before v3.") {
		t.Errorf("on v2, s is rendered with v2's guards: %q", on2.Patches[1].Log)
	}
	if p := posted.Patches[len(posted.Patches)-1]; p.Number != 3 || !strings.Contains(p.Log, "From v3 on.") || posted.Moved() || posted.Name() != "st v1 on v3" {
		t.Errorf("the posted series changed: patch %d %q, moved %v", p.Number, p.Log, posted.Moved())
	}
	if same, err := sp.Select(1, "st", 3); err != nil || same != posted {
		t.Errorf("on the revision it was posted on: %v, %v", same, err)
	}
	for _, tc := range []struct {
		stack   string
		on      int
		wantErr error
	}{
		{"st", 1, spec.ErrAlreadyHas},
		{"st", 9, spec.ErrNoRevision},
		{"", 2, spec.ErrNotStacked},
	} {
		if _, err := sp.Select(0, tc.stack, tc.on); !errors.Is(err, tc.wantErr) {
			t.Errorf("stack %q on v%d: %v, want %v", tc.stack, tc.on, err, tc.wantErr)
		}
	}
	main, _ := sp.Revision(3)
	if _, err := main.On(2); !errors.Is(err, spec.ErrNotStacked) {
		t.Errorf("main series on v2: %v", err)
	}
}

// TestStackOnRendersItsOwn: the built-in x86 series laid on v15 renders
// every created file as it does in a process that never rendered it on
// v16: a render kept for one revision is not another's.
func TestStackOnRendersItsOwn(t *testing.T) {
	laid := func(sp *spec.Spec) *spec.Revision {
		r, err := sp.Select(0, "x86", 15)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	fresh, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	posted, _ := sp.Stack("x86", 0)
	on15, want := laid(sp), laid(fresh)
	for _, p := range sp.CreatedFiles() {
		for step := 1; step <= len(posted.Patches); step++ {
			if _, _, err := posted.Render(p, step); err != nil {
				t.Fatal(err)
			}
		}
		for step := 1; step <= len(on15.Patches); step++ {
			got, _, err1 := on15.Render(p, step)
			w, _, err2 := want.Render(p, step)
			if err1 != nil || err2 != nil || string(got) != string(w) {
				t.Errorf("%s after patch %d of %s: differs from a fresh render (%v, %v)", p, step, on15.Name(), err1, err2)
			}
		}
	}
}

// TestStackUnknownName: a stacked series the description lacks is refused
// with the names of those it has, and a revision a stacked series lacks
// with its revisions.
func TestStackUnknownName(t *testing.T) {
	sp, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		v    int
		want string
	}{
		{"x86-619", 0, `no series "x86-619" is stacked on the main one: no such revision in the series description (it has x86, x86-6.19)`},
		{"x86", 9, "x86 v9: no such revision in the series description (it has v2)"},
	} {
		_, err := sp.Stack(c.name, c.v)
		if err == nil || err.Error() != c.want || !errors.Is(err, spec.ErrNoRevision) {
			t.Errorf("Stack(%q, %d): %v, want %q", c.name, c.v, err, c.want)
		}
	}
}
