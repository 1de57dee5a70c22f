package spec_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"kpatch/plumbing/outdir"
	"kpatch/spec"
)

// writeFS writes the files of f under a new directory and returns it.
func writeFS(t *testing.T, f fstest.MapFS) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "spec")
	for p, file := range f {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, file.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestWriter makes each kind of change to the model spec on disk and wants
// the files the writer leaves, byte for byte, and a spec that loads with
// them.
func TestWriter(t *testing.T) {
	const series2 = "Version: 2\nSubject: s\nFrom: A <a@example.org>\nDate: Mon, 30 Jun 2025 20:53:21 -0400\n\ncover 2\n"
	tests := []struct {
		name   string
		setup  map[string]string // files of the model spec replaced first
		change func(w *spec.Writer) error
		want   map[string]string // file -> content after Write
	}{
		{"replace a header field", nil, func(w *spec.Writer) error {
			return w.SetField("v2", "Subject", "the new subject")
		}, map[string]string{"v2/series": strings.Replace(series2, "Subject: s\n", "Subject: the new subject\n", 1)}},
		{"add a header field at the end of the header", nil, func(w *spec.Writer) error {
			return w.SetField("v2", "Base", "v6.16-rc5")
		}, map[string]string{"v2/series": strings.Replace(series2, "-0400\n\n", "-0400\nBase: v6.16-rc5\n\n", 1)}},
		{"set twice: the last value", nil, func(w *spec.Writer) error {
			if err := w.SetField("v2", "Subject", "x"); err != nil {
				return err
			}
			return w.SetField("v2", "Subject", "y")
		}, map[string]string{"v2/series": strings.Replace(series2, "Subject: s\n", "Subject: y\n", 1)}},
		{"a line of the cover letter is no field", map[string]string{"v2/series": series2 + "Date: in the cover\n"}, func(w *spec.Writer) error {
			return w.SetField("v2", "Date", "Tue, 01 Jul 2025 20:53:21 -0400")
		}, map[string]string{"v2/series": strings.Replace(series2, "Mon, 30 Jun", "Tue, 01 Jul", 1) + "Date: in the cover\n"}},
		{"a cover letter without a changes section gets one at its end", nil, func(w *spec.Writer) error {
			return w.AddCoverChanges("v2", "Changes since v1: LINK\n\n")
		}, map[string]string{"v2/series": series2 + "\nChanges since v1: LINK\n"}},
		{"notes", nil, func(w *spec.Writer) error {
			w.SetNotes("v2", "d", "Changes since v1:\n- new\n")
			return nil
		}, map[string]string{"v2/d.notes": "Changes since v1:\n- new\n"}},
		{"a trailer for the declaring revision is not guarded", nil, func(w *spec.Writer) error {
			return w.AddTrailer("v1/c.patch", 1, "Acked-by: B <b@example.org>")
		}, map[string]string{"v1/c.patch": "Author: A <a@example.org>\nSubject: Add c\n\nMessage of c.\nAcked-by: B <b@example.org>\n"}},
		{"trailers for a later revision: one guard, before the edits", nil, func(w *spec.Writer) error {
			if err := w.AddTrailer("v1/b.patch", 2, "Acked-by: C <c@example.org>"); err != nil {
				return err
			}
			return w.AddTrailer("v1/b.patch", 2, "Tested-by: D <d@example.org>")
		}, map[string]string{"v1/b.patch": "Author: B <b@example.org>\nSubject: Add b\n\nMessage of b.\n{{if ge .Version 2}}\nAcked-by: C <c@example.org>\nTested-by: D <d@example.org>\n{{end}}\n=== edits\n@ y.c: line-after \"one\"\n+b\n"}},
		{"a trailer is text, whatever it holds", nil, func(w *spec.Writer) error {
			if err := w.AddTrailer("v1/c.patch", 1, "Reviewed-by: C {{.Version}} <c@example.org>"); err != nil {
				return err
			}
			return w.AddTrailer("v1/c.patch", 1, "Tested-by: E {{end}} <e@example.org>")
		}, map[string]string{"v1/c.patch": "Author: A <a@example.org>\nSubject: Add c\n\nMessage of c.\nReviewed-by: C {{\"{{\"}}.Version}} <c@example.org>\nTested-by: E {{\"{{\"}}end}} <e@example.org>\n"}},
		{"a new message keeps the edits", nil, func(w *spec.Writer) error {
			return w.SetMessage("v1/b.patch", "Author: B <b@example.org>\nSubject: Add b{{if ge .Version 2}}, folded{{end}}\n\nNew message.\n")
		}, map[string]string{"v1/b.patch": "Author: B <b@example.org>\nSubject: Add b{{if ge .Version 2}}, folded{{end}}\n\nNew message.\n=== edits\n@ y.c: line-after \"one\"\n+b\n"}},
		{"a template in a new folder", nil, func(w *spec.Writer) error {
			w.SetTemplate("lib/new/g.c", "{{created \"d\"}}\ng\n")
			return nil
		}, map[string]string{"files/lib/new/g.c.tmpl": "{{created \"d\"}}\ng\n"}},
		{"a new revision", nil, func(w *spec.Writer) error {
			if err := w.AddRevision("v2", "v3"); err != nil {
				return err
			}
			if err := w.SetField("v3", "Version", "3"); err != nil {
				return err
			}
			w.SetNotes("v3", "a", "Changes since v2:\n")
			return nil
		}, map[string]string{"v3/series": strings.Replace(series2, "Version: 2\n", "Version: 3\n", 1), "v3/order": "a + b   # folded\nd\n", "v3/a.notes": "Changes since v2:\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := modelFS()
			for p, text := range tc.setup {
				f[p] = &fstest.MapFile{Data: []byte(text)}
			}
			dir := writeFS(t, f)
			w := spec.NewWriter(dir)
			if err := tc.change(w); err != nil {
				t.Fatal(err)
			}
			if err := w.Write(); err != nil {
				t.Fatal(err)
			}
			var files []string
			for f, want := range tc.want {
				files = append(files, f)
				got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
				if err != nil || string(got) != want {
					t.Errorf("%s: %q (%v), want %q", f, got, err, want)
				}
			}
			if len(w.Files()) != len(files) {
				t.Errorf("Files() = %v, want %v", w.Files(), files)
			}
			if _, err := spec.Load(os.DirFS(dir)); err != nil {
				t.Errorf("the spec does not load: %v", err)
			}
			leftovers(t, dir)
		})
	}
}

// leftovers fails for any temporary file or folder of kpatch's in dir.
func leftovers(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".") {
			t.Errorf("%s is left", p)
		}
		return nil
	})
}

// TestAddCoverChanges: the new "Changes since" section goes above the
// newest one a cover letter has (the way the maintainers stack them), or at
// the end of a cover letter without one (v16's as posted).
func TestAddCoverChanges(t *testing.T) {
	const head = "Version: 2\nSubject: s\nFrom: A <a@example.org>\nDate: Mon, 30 Jun 2025 20:53:21 -0400\n\n"
	const sec = "Changes since v16: LINK\n\n"
	for _, tc := range []struct{ name, in, want string }{
		{"above the newest", "Intro.\n\nChanges since v15: L15\n\n- a\n", "Intro.\n\nChanges since v16: LINK\n\nChanges since v15: L15\n\n- a\n"},
		{"none: at the end", "Intro.\n\nHead SHA1: x\n\n", "Intro.\n\nHead SHA1: x\n\nChanges since v16: LINK\n"},
		{"a misspelt one is not a section", "Changse since v14: L\n", "Changse since v14: L\n\nChanges since v16: LINK\n"},
	} {
		f := modelFS()
		f["v2/series"] = &fstest.MapFile{Data: []byte(head + tc.in)}
		dir := writeFS(t, f)
		w := spec.NewWriter(dir)
		if err := w.AddCoverChanges("v2", sec); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "v2", "series")); string(got) != head+tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, head+tc.want)
		}
	}
}

// TestWriterRefuses: a change the format does not take, or after which the
// spec does not load, is refused and nothing is written.
func TestWriterRefuses(t *testing.T) {
	tests := []struct {
		name   string
		change func(w *spec.Writer) error
		want   string
	}{
		{"a field over two lines", func(w *spec.Writer) error { return w.SetField("v2", "Subject", "a\nb") }, "a header field is one line"},
		{"an unknown field", func(w *spec.Writer) error { return w.SetField("v2", "Subjct", "x") }, `unknown field "Subjct"`},
		{"a revision that exists", func(w *spec.Writer) error { return w.AddRevision("v1", "v2") }, "already exists"},
		{"a trailer for what is no declaration", func(w *spec.Writer) error { return w.AddTrailer("v1/series", 2, "Acked-by: C <c@example.org>") }, "not a patch declaration"},
		{"a declaration without a message", func(w *spec.Writer) error {
			if err := w.SetMessage("v1/b.patch", "Author: B <b@example.org>\nSubject: Add b\n\n"); err != nil {
				return err
			}
			return w.AddTrailer("v1/b.patch", 1, "Acked-by: C <c@example.org>")
		}, "v1/b.patch: empty commit message"},
		{"a template that does not parse", func(w *spec.Writer) error {
			w.SetTemplate("f.c", "{{created \"a\"}}\n{{if since \"b\"}}\n")
			return nil
		}, "does not load"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFS(t, modelFS())
			w := spec.NewWriter(dir)
			err := tc.change(w)
			if err == nil {
				err = w.Write()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			for p, f := range modelFS() {
				if got, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))); string(got) != string(f.Data) {
					t.Errorf("%s was changed", p)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "v3")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("v3 was made: %v", err)
			}
			leftovers(t, dir)
		})
	}
	// An existing folder is outdir's ErrExists.
	if err := spec.NewWriter(writeFS(t, modelFS())).AddRevision("v1", "v2"); !errors.Is(err, outdir.ErrExists) {
		t.Errorf("AddRevision over v2: %v, want outdir.ErrExists", err)
	}
}

// TestTrailerRendersAsGiven: trailers holding template actions render as
// written, in every revision they are given to.
func TestTrailerRendersAsGiven(t *testing.T) {
	dir := writeFS(t, modelFS())
	w := spec.NewWriter(dir)
	lines := []string{"Reviewed-by: C {{.Version}} <c@example.org>", "Tested-by: E {{end}} <e@example.org>", "Acked-by: F {{ <f@example.org>"}
	for _, l := range lines {
		if err := w.AddTrailer("v1/a.patch", 2, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	v1, _ := sp.Revision(1)
	v2, _ := sp.Revision(2)
	if want := "Message of a.\n" + strings.Join(lines, "\n") + "\n"; v2.Patches[0].Log != want {
		t.Errorf("v2's message %q, want %q", v2.Patches[0].Log, want)
	}
	if v1.Patches[0].Log != "Message of a.\n" {
		t.Errorf("v1's message %q: the trailers are v2's", v1.Patches[0].Log)
	}
}
