package linux_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kpatch/spec"
	"kpatch/templates/linux"
)

// TestFlattenGivesTheFormerFolders flattens v11 and v12 and compares each
// patch with the folder the revision had before patches were declared once
// (testdata/former, one complete folder a revision, as the spec was
// written up to then): the model changed how the spec is written, not what
// a revision says. Comment lines of the former edits are not carried. One
// correction was made since, in the former folder too: v12's patch 6 has
// the sentence about clearing the timestamp that the posted v12 carries
// (series.TestPostedRevisions compares every message with the posting).
func TestFlattenGivesTheFormerFolders(t *testing.T) {
	s, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{11, 12} {
		r, err := s.Revision(v)
		if err != nil {
			t.Fatal(err)
		}
		flat, err := r.Flatten()
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join("testdata", "former", "v"+itoa(v))
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range ents {
			want, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := flat[e.Name()]
			if !ok {
				t.Errorf("v%d: flattened has no %s", v, e.Name())
				continue
			}
			if string(got) != withoutComments(string(want)) {
				t.Errorf("v%d %s differs:\n got: %q\nwant: %q", v, e.Name(), got, want)
			}
			n++
		}
		if n != len(r.Patches)+1 {
			t.Errorf("v%d: compared %d files, want %d patches and the series file", v, n, len(r.Patches))
		}
	}
}

func withoutComments(s string) string {
	head, edits, ok := strings.Cut(s, "=== edits\n")
	if !ok {
		return s
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(edits, "\n") {
		if !strings.HasPrefix(l, "#") {
			b.WriteString(l)
		}
	}
	return head + "=== edits\n" + b.String()
}

func itoa(v int) string { return strconv.Itoa(v) }
