package spec_test

import (
	"testing"

	"kpatch/spec"
	"kpatch/templates/linux"
)

// BenchmarkLoad loads the built-in series description: every revision's
// declarations rendered and parsed, every guard checked. kpatch pays it
// once a process.
func BenchmarkLoad(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := spec.Load(linux.FS); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderRevision renders every created file at every patch of
// the newest revision, as gen does, on a freshly loaded spec each time (a
// spec keeps what it rendered).
func BenchmarkRenderRevision(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, err := spec.Load(linux.FS)
		if err != nil {
			b.Fatal(err)
		}
		r, _ := s.Revision(0)
		b.StartTimer()
		for _, p := range s.CreatedFiles() {
			for step := 1; step <= len(r.Patches); step++ {
				if _, _, err := r.Render(p, step); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
