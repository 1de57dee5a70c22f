package revision_test

import (
	"errors"
	"fmt"
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
	before, err := series.LoadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := before.Revisions[len(before.Revisions)-1].Version
	date := time.Date(2025, 7, 7, 21, 22, 0, 0, time.FixedZone("", -4*3600))
	res, err := revision.New(revision.Options{SpecDir: dir, Base: "v6.16-rc5", Date: date})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := series.LoadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	prev, _ := sp.Revision(last)
	// The new folder holds the series file, the order and one notes file
	// a patch: patches are declared once, in the revision that first has them.
	if res.Previous != last || res.Version != last+1 || len(res.Files) != 2+len(prev.Patches) {
		t.Fatalf("result %+v", res)
	}
	r, err := sp.Revision(0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != last+1 || r.Base != "v6.16-rc5" || !r.Date.Equal(date) || r.Subject != prev.Subject || len(r.Patches) != len(prev.Patches) {
		t.Errorf("v%d: version %d base %s date %s, %d patches", last+1, r.Version, r.Base, r.Date, len(r.Patches))
	}
	// The new section goes above the previous "Changes since" section, or
	// at the end of a cover letter that has none (v16's as posted).
	head := fmt.Sprintf("Changes since v%d: https://lore.kernel.org/all/%s/\n", last, series.MessageID(prev, 0))
	if older := fmt.Sprintf("Changes since v%d: ", last-1); strings.Contains(prev.Cover, older) {
		if !strings.Contains(r.Cover, head+"\n"+older) {
			t.Errorf("cover letter has no empty v%d section above the v%d one:\n%s", last, last-1, r.Cover)
		}
	} else if r.Cover != strings.TrimRight(prev.Cover, "\n")+"\n\n"+head {
		t.Errorf("cover letter is not v%d's with an empty v%d section at its end:\n%s", last, last, r.Cover)
	}
	for i, p := range r.Patches {
		pp := prev.Patches[i]
		if p.ID != pp.ID || p.Subject != pp.Subject || p.Log != pp.Log || len(p.Edits) != len(pp.Edits) {
			t.Errorf("patch %d: %s differs from v%d's %s beyond its notes", p.Number, p.ID, last, pp.ID)
		}
		head := fmt.Sprintf("Changes since v%d: https://lore.kernel.org/all/%s/\n", last, series.MessageID(prev, p.Number))
		if !strings.HasPrefix(p.Changelog, head) {
			t.Errorf("patch %d: notes %q do not start with %q", p.Number, p.Changelog, head)
		}
		if pp.Changelog != "" && !strings.HasSuffix(p.Changelog, pp.Changelog) {
			t.Errorf("patch %d: the v%d notes were not kept below", p.Number, last)
		}
	}
	// The templates render the new revision as the previous one until the
	// maintainer edits them.
	for _, path := range sp.CreatedFiles() {
		a, _, err1 := prev.Render(path, len(prev.Patches))
		b, _, err2 := r.Render(path, len(r.Patches))
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Errorf("%s renders differently in v%d: %v %v", path, last+1, err1, err2)
		}
	}
	// The next run starts the one after; a directory in the way of the
	// third is refused and left alone.
	if res, err := revision.New(revision.Options{SpecDir: dir}); err != nil || res.Version != last+2 {
		t.Fatalf("second run: %+v, %v", res, err)
	}
	os.Mkdir(filepath.Join(dir, fmt.Sprintf("v%d", last+3)), 0o755)
	if _, err := revision.New(revision.Options{SpecDir: dir}); !errors.Is(err, revision.ErrExists) {
		t.Errorf("third run: %v, want ErrExists", err)
	}
	var names []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	if len(names) != 0 {
		t.Errorf("spec directory holds %s (a temporary directory left)", names)
	}
}

func TestNewRevisionErrors(t *testing.T) {
	if _, err := revision.New(revision.Options{SpecDir: filepath.Join(t.TempDir(), "none")}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("missing spec: %v", err)
	}
}
