package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestUnreadableMailOneError: ../shared's hh-misc holds twelve patch
// files, one with no mail headers (git am: "Patch does not have a valid
// e-mail address"). verify refused the whole series (exit 2); it is one
// PATCH_APPLY error naming that file, and the eleven others are checked.
func TestUnreadableMailOneError(t *testing.T) {
	dir := foreignDir(t, "hh-misc")
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

// TestPositionsAsPosted: when a mail of a numbered series cannot be read,
// the report keeps the series' own positions ("patch 03/18"), not the
// places among the patches read, and names the unreadable mail by its
// place among the files.
func TestPositionsAsPosted(t *testing.T) {
	src := foreignDir(t, "amd-tlb")
	files, _ := filepath.Glob(filepath.Join(src, "00*.patch"))
	if len(files) < 4 {
		t.Fatalf("amd-tlb has %d patch files", len(files))
	}
	dir := t.TempDir()
	for i, f := range files[:4] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			b = []byte("not a mail\n")
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadMail(dir, nil)
	if err != nil {
		t.Fatalf("refused whole: %v", err)
	}
	r := NewReport(s, Run(s, Options{}))
	var pos []int
	for _, p := range r.PerPatch {
		if p.Patch > 0 {
			pos = append(pos, p.Position)
		}
	}
	if !reflect.DeepEqual(pos, []int{1, 3, 4}) || r.Of != len(files) || r.Patches != 3 {
		t.Errorf("positions %v of %d (%d read), want [1 3 4] of %d (3 read)", pos, r.Of, r.Patches, len(files))
	}
	var text strings.Builder
	r.WriteText(&text)
	if want := fmt.Sprintf("patch 03/%d ", len(files)); !strings.Contains(text.String(), want) {
		t.Errorf("no %q in\n%s", want, text.String())
	}
	for _, f := range only(r.Findings, "PATCH_APPLY") {
		if f.Patch == 0 && !strings.Contains(f.Message, "(mail 2 of the series)") {
			t.Errorf("the unreadable mail: %s", f.Message)
		}
	}
}
