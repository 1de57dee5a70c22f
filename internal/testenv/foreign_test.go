package testenv

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestForeignSeries: every folder the README of ../shared/foreign-series
// lists in its table is a series found, with a SOURCE.txt naming its
// repository, and no folder is found that the README does not list.
func TestForeignSeries(t *testing.T) {
	fs := ForeignSeries(t)
	readme, err := os.ReadFile(filepath.Join(sharedDir(t, "foreign-series"), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^\| ([a-z0-9-]+) \| [0-9]+ \|`).FindAllStringSubmatch(string(readme), -1) {
		listed = append(listed, m[1])
	}
	sort.Strings(listed)
	var found []string
	for _, f := range fs {
		found = append(found, f.Name)
		if !strings.Contains(f.Source, "repo:") {
			t.Errorf("%s: SOURCE.txt names no repository: %q", f.Name, f.Source)
		}
		if _, err := os.Stat(f.Path); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
	if len(listed) == 0 || strings.Join(found, " ") != strings.Join(listed, " ") {
		t.Errorf("series found %v, the README lists %v", found, listed)
	}
}
