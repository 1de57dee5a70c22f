package spec

import (
	"bytes"
	"testing"

	"kpatch/templates/linux"
)

// TestRenderBeforeCreation: Render answers "does not exist" without
// running a template that starts with {{created "id"}}; for every
// revision of the built-in spec, the stacked ones and one laid on another
// revision, every created file after every patch, that answer and the
// content equal what running the template gives.
func TestRenderBeforeCreation(t *testing.T) {
	s, err := Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	revs := append(append([]*Revision{}, s.Revisions...), s.Stacked...)
	on, err := s.Select(0, "x86", 15)
	if err != nil {
		t.Fatal(err)
	}
	revs = append(revs, on)
	short := 0
	for _, r := range revs {
		for _, path := range s.CreatedFiles() {
			f := s.Templates[path]
			for step := 1; step <= len(r.Patches); step++ {
				got, exists, err := r.Render(path, step)
				if err != nil {
					t.Fatalf("%s v%d %s after %d: %v", r.Name(), r.Version, path, step, err)
				}
				out, created, err := r.executeTemplate(f, step)
				if err != nil {
					t.Fatal(err)
				}
				want := step >= created
				if exists != want || exists && !bytes.Equal(got, out) {
					t.Errorf("%s v%d %s after patch %d: exists %v, running the template says %v", r.Name(), r.Version, path, step, exists, want)
				}
				if f.createdBy != "" && !want {
					short++
				}
			}
		}
	}
	if short == 0 {
		t.Fatal("no render was answered without running its template")
	}
}
