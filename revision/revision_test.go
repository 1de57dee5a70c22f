package revision_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kpatch/revision"
	"kpatch/series"
	"kpatch/spec"
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
	// v16's link is the Message-Id it was posted with, as the archive
	// has it (../shared/revisions/README.md), not one kpatch made up.
	posted := realCoverIDs(t)[last]
	if posted == "" || res.Unposted {
		t.Fatalf("v%d: posted as %q, unposted %v", last, posted, res.Unposted)
	}
	head := fmt.Sprintf("Changes since v%d: https://lore.kernel.org/all/%s/\n", last, posted)
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
		// v16 records its cover letter's id only: each patch links it.
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
	// The next run starts the one after, from a revision not posted: its
	// links are the ids kpatch gen gives, and it says so; its date is now.
	t0 := time.Now().Truncate(time.Second)
	res, err = revision.New(revision.Options{SpecDir: dir})
	if err != nil || res.Version != last+2 || !res.Unposted {
		t.Fatalf("second run: %+v, %v", res, err)
	}
	sp, _ = series.LoadSpec(dir)
	r2, _ := sp.Revision(last + 2)
	r1, _ := sp.Revision(last + 1)
	if r2.Date.Before(t0) || r2.Date.After(time.Now()) {
		t.Errorf("v%d is dated %v, not now (%v)", last+2, r2.Date, t0)
	}
	if want := fmt.Sprintf("Changes since v%d: https://lore.kernel.org/all/%s/\n", last+1, series.MessageID(r1, 2)); !strings.HasPrefix(r2.Patches[1].Changelog, want) {
		t.Errorf("patch 2 of an unposted revision's successor: %q, want %q", r2.Patches[1].Changelog, want)
	}
	// A third directory in the way is refused and left alone.
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

// TestNewRevisionLinksEachPatch: once the previous revision's posting is
// recorded with every patch's Message-Id (as kpatch send records it),
// each patch's notes link its own posting.
func TestNewRevisionLinksEachPatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spec")
	if err := linux.Export(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := revision.New(revision.Options{SpecDir: dir}); err != nil {
		t.Fatal(err)
	}
	sp, _ := series.LoadSpec(dir)
	v17, _ := sp.Revision(0)
	ids := []string{"cover@example.org"}
	for _, p := range v17.Patches {
		ids = append(ids, fmt.Sprintf("patch%d@example.org", p.Number))
	}
	w := spec.NewWriter(dir)
	if err := w.RecordPosting(v17.Dir, ids, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	res, err := revision.New(revision.Options{SpecDir: dir, Archive: "https://lore.kernel.org/r/"})
	if err != nil || res.Unposted {
		t.Fatalf("%+v, %v", res, err)
	}
	sp, _ = series.LoadSpec(dir)
	v18, _ := sp.Revision(0)
	if !strings.Contains(v18.Cover, "Changes since v17: https://lore.kernel.org/r/cover@example.org/\n") {
		t.Errorf("cover letter:\n%s", v18.Cover)
	}
	for _, p := range v18.Patches {
		if want := fmt.Sprintf("Changes since v17: https://lore.kernel.org/r/patch%d@example.org/\n", p.Number); !strings.HasPrefix(p.Changelog, want) {
			t.Errorf("patch %d: %q, want %q", p.Number, p.Changelog, want)
		}
	}
}

// realCoverIDs reads the Message-Ids of the posted cover letters from
// ../shared/revisions/README.md's table, by version.
func realCoverIDs(t *testing.T) map[int]string {
	t.Helper()
	b := readmeOfRevisions(t)
	ids := map[int]string{}
	for _, l := range strings.Split(string(b), "\n") {
		var v int
		f := strings.Split(l, "|")
		if len(f) > 4 {
			if _, err := fmt.Sscanf(strings.TrimSpace(f[1]), "v%d", &v); err == nil {
				ids[v] = strings.TrimSpace(f[3])
			}
		}
	}
	return ids
}

// readmeOfRevisions reads shared/revisions/README.md in the working
// directory or the nearest of its parents that has it.
func readmeOfRevisions(t *testing.T) []byte {
	t.Helper()
	wd, _ := os.Getwd()
	for dir := wd; ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "shared", "revisions", "README.md")); err == nil {
			return b
		}
		if dir == filepath.Dir(dir) {
			t.Fatalf("no shared/revisions/README.md above %s: the posted revisions sit beside the repository (docs/tests.md)", wd)
		}
	}
}

// TestRecordedPostingsAreTheArchives: the cover letters' Message-Ids the
// built-in spec records are the archive's: v12 to v16 and x86 v2 as
// ../shared/revisions/README.md gives them, v11 as v12's cover letter
// links it.
func TestRecordedPostingsAreTheArchives(t *testing.T) {
	sp, err := series.LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	want := realCoverIDs(t)
	want[11] = "20250625225600.555017347@goodmis.org"
	v12, _ := sp.Revision(12)
	if !strings.Contains(v12.Cover, "Changes since v11: https://lore.kernel.org/linux-trace-kernel/"+want[11]+"/") {
		t.Errorf("v12's cover letter does not link v11 as %s", want[11])
	}
	for v := 11; v <= 16; v++ {
		r, err := sp.Revision(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.PostedID(0); got != want[v] || got == "" {
			t.Errorf("v%d: recorded %q, the archive has %q", v, got, want[v])
		}
	}
	m := regexp.MustCompile(`v2 \(2025-08-27, Message-Id ([^;]+);`).FindSubmatch(readmeOfRevisions(t))
	x86, err := sp.Stack("x86", 0)
	if err != nil || m == nil {
		t.Fatalf("x86: %v, README match %q", err, m)
	}
	if got := x86.PostedID(0); got != string(m[1]) {
		t.Errorf("x86 v2: recorded %q, the archive has %q", got, m[1])
	}
}

// TestNewStackedRevision: --stack starts the next revision of a stacked
// series in a folder NAME-vN of its own (a name with a dot included),
// the main series' newest revision unchanged; the links of its own
// patches, numbered as the stacked series is posted, name its posting
// (x86 v2 records its cover letter's Message-Id, which each patch's link
// takes), or the ids kpatch gen gives an unposted one.
func TestNewStackedRevision(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spec")
	if err := linux.Export(dir); err != nil {
		t.Fatal(err)
	}
	before, err := series.LoadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	mainNewest, _ := before.Revision(0)
	for _, tc := range []struct {
		stack, folder, name string
		own                 int
		link                func(n int) string
		unposted            bool
	}{
		{"x86", "x86-v3", "x86 v3", 2, func(int) string { return "20250827193644.527334838@kernel.org" }, false},
		{"x86-6.19", "x86-6.19-v2", "x86-6.19 v2", 16, func(n int) string { return fmt.Sprintf("20250924-unwind-x86-6.19-v1-%d@infradead.org", n) }, true},
	} {
		t.Run(tc.stack, func(t *testing.T) {
			res, err := revision.New(revision.Options{SpecDir: dir, Stack: tc.stack})
			if err != nil {
				t.Fatal(err)
			}
			if res.Name != tc.name || filepath.Base(res.Dir) != tc.folder || res.Unposted != tc.unposted {
				t.Fatalf("result %+v", res)
			}
			sp, err := series.LoadSpec(dir)
			if err != nil {
				t.Fatal(err)
			}
			r, err := sp.Stack(tc.stack, 0)
			if err != nil {
				t.Fatal(err)
			}
			if r.Version != res.Version || len(r.Patches)-r.Own != tc.own || r.Prerequisite == nil || r.Prerequisite.Version != mainNewest.Version {
				t.Fatalf("%s: version %d, %d own patches", tc.name, r.Version, len(r.Patches)-r.Own)
			}
			if m, _ := sp.Revision(0); m.Version != mainNewest.Version {
				t.Errorf("the main series' newest is v%d, want v%d", m.Version, mainNewest.Version)
			}
			if want := fmt.Sprintf("Changes since v%d: https://lore.kernel.org/all/%s/\n", res.Previous, tc.link(0)); !strings.Contains(r.Cover, want) {
				t.Errorf("cover letter has no %q:\n%s", want, r.Cover)
			}
			for _, p := range r.Patches[r.Own:] {
				n := p.Number - r.Own
				if want := fmt.Sprintf("Changes since v%d: https://lore.kernel.org/all/%s/\n", res.Previous, tc.link(n)); !strings.HasPrefix(p.Changelog, want) {
					t.Errorf("patch %d: %q, want %q", n, p.Changelog, want)
				}
			}
		})
	}
	if _, err := revision.New(revision.Options{SpecDir: dir, Stack: "arm64"}); err == nil || !strings.Contains(err.Error(), `no series "arm64" is stacked`) {
		t.Errorf("an unknown stack: %v", err)
	}
}
