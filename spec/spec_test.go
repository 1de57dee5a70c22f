package spec_test

import (
	"testing"

	"kpatch/internal/oracle"
	"kpatch/spec"
	"kpatch/templates/linux"
)

// TestTemplatesReproduceSeed renders every created file at every patch of
// v11 and compares it, byte for byte, with the file rebuilt from the posted
// series (whose blob hashes oracle checks).
func TestTemplatesReproduceSeed(t *testing.T) {
	s, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Revision(11)
	if err != nil {
		t.Fatal(err)
	}
	th, err := oracle.ParseSeed()
	if err != nil {
		t.Fatal(err)
	}
	want, err := oracle.CreatedFiles(th)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(s.Templates) {
		t.Errorf("spec has %d templates, the series creates %d files", len(s.Templates), len(want))
	}
	checked := 0
	for path, versions := range want {
		vi := -1
		for step := 0; step <= len(r.Patches); step++ {
			for vi+1 < len(versions) && versions[vi+1].Patch <= step {
				vi++
			}
			got, exists, err := r.Render(path, step)
			if err != nil {
				t.Fatal(err)
			}
			if vi < 0 {
				if exists {
					t.Errorf("%s exists after patch %d, before the patch that creates it", path, step)
				}
				continue
			}
			if !exists {
				t.Errorf("%s missing after patch %d", path, step)
				continue
			}
			if h := oracle.BlobHash(got); h[:12] != versions[vi].Hash[:12] {
				t.Errorf("%s after patch %d: blob %s, want %s", path, step, h[:12], versions[vi].Hash)
			}
			if versions[vi].Patch == step {
				checked++
			}
		}
	}
	if checked != 39 {
		t.Errorf("checked %d index hashes, want all 39", checked)
	}
}

func TestRevisionDefaults(t *testing.T) {
	s, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Revision(0)
	if err != nil {
		t.Fatal(err)
	}
	if newest := s.Revisions[len(s.Revisions)-1]; r != newest {
		t.Errorf("the default revision is v%d, the newest v%d", r.Version, newest.Version)
	}
	if r, err := s.Revision(12); err != nil || r.Base != "v6.16-rc4" || len(r.Patches) != 14 {
		t.Errorf("v12: %v", err)
	}
	if r, err := s.Revision(11); err != nil || r.Base != "v6.16-rc2" || len(r.Patches) != 14 {
		t.Errorf("v11: %v", err)
	}
	if _, err := s.Revision(9); err == nil {
		t.Error("v9 should not exist")
	}
}
