package revision_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kpatch/revision"
	"kpatch/series"
	"kpatch/templates/linux"
)

func TestNewRevision(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spec")
	if err := linux.Export(dir); err != nil {
		t.Fatal(err)
	}
	date := time.Date(2025, 7, 7, 21, 22, 0, 0, time.FixedZone("", -4*3600))
	res, err := revision.New(revision.Options{SpecDir: dir, Base: "v6.16-rc5", Date: date})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 13 || res.Previous != 12 || len(res.Files) != 16 {
		t.Fatalf("result %+v", res)
	}
	sp, err := series.LoadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	prev, _ := sp.Revision(12)
	r, err := sp.Revision(0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 13 || r.Base != "v6.16-rc5" || !r.Date.Equal(date) || r.Subject != prev.Subject || len(r.Patches) != len(prev.Patches) {
		t.Errorf("v13: version %d base %s date %s, %d patches", r.Version, r.Base, r.Date, len(r.Patches))
	}
	link := "https://lore.kernel.org/all/20250625-unwind-deferred-v12-0@goodmis.org/"
	if !strings.Contains(r.Cover, "Changes since v12: "+link+"\n\nChanges since v11: ") {
		t.Errorf("cover letter has no empty v12 section above the v11 one:\n%s", r.Cover)
	}
	for i, p := range r.Patches {
		pp := prev.Patches[i]
		if p.ID != pp.ID || p.Subject != pp.Subject || p.Log != pp.Log || len(p.Edits) != len(pp.Edits) {
			t.Errorf("patch %d: %s differs from v12's %s beyond its notes", p.Number, p.ID, pp.ID)
		}
		head := "Changes since v12: https://lore.kernel.org/all/" + series.MessageID(prev, p.Number) + "/\n"
		if !strings.HasPrefix(p.Changelog, head) {
			t.Errorf("patch %d: notes %q do not start with %q", p.Number, p.Changelog, head)
		}
		if pp.Changelog != "" && !strings.HasSuffix(p.Changelog, pp.Changelog) {
			t.Errorf("patch %d: the v11 notes were not kept below", p.Number)
		}
	}
	// The templates render v13 as v12 until the maintainer edits them.
	for _, path := range sp.CreatedFiles() {
		a, _, err1 := prev.Render(path, len(prev.Patches))
		b, _, err2 := r.Render(path, len(r.Patches))
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Errorf("%s renders differently in v13: %v %v", path, err1, err2)
		}
	}
	// The next run starts v14 from v13; a v15 directory that is in the way
	// is refused and left alone.
	if res, err := revision.New(revision.Options{SpecDir: dir}); err != nil || res.Version != 14 {
		t.Fatalf("second run: %+v, %v", res, err)
	}
	os.Mkdir(filepath.Join(dir, "v15"), 0o755)
	if _, err := revision.New(revision.Options{SpecDir: dir}); !errors.Is(err, revision.ErrExists) {
		t.Errorf("third run: %v, want ErrExists", err)
	}
	var names []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "files v11 v12 v13 v14 v15" {
		t.Errorf("spec directory holds %s (a temporary directory left?)", got)
	}
}

func TestNewRevisionErrors(t *testing.T) {
	if _, err := revision.New(revision.Options{SpecDir: filepath.Join(t.TempDir(), "none")}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("missing spec: %v", err)
	}
}
