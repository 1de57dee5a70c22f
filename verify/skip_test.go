package verify

import (
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// TestUnreadableMailOneError: ../shared's hh-misc holds twelve patch
// files, one with no mail headers (git am: "Patch does not have a valid
// e-mail address"). verify refused the whole series (exit 2); it is one
// PATCH_APPLY error naming that file, and the eleven others are checked.
func TestUnreadableMailOneError(t *testing.T) {
	var dir string
	for _, fs := range testenv.ForeignSeries(t) {
		if fs.Name == "hh-misc" {
			dir = fs.Path
		}
	}
	if dir == "" {
		t.Fatal("no hh-misc in ../shared/foreign-series")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.patch"))
	s, err := ReadMail(dir, nil)
	if err != nil {
		t.Fatalf("refused whole: %v", err)
	}
	if len(s.Patches) != len(files)-1 {
		t.Errorf("%d patches checked of %d files", len(s.Patches), len(files))
	}
	var got []Finding
	for _, f := range only(Run(s, Options{}), "PATCH_APPLY") {
		if f.File == "vfs-20241004-silence-timestamp-expiry-warning.patch" {
			got = append(got, f)
		}
	}
	if len(got) != 1 || got[0].Severity != Error || !strings.Contains(got[0].Message, "git am --skip") {
		t.Errorf("PATCH_APPLY on the file without headers: %+v", got)
	}
}
