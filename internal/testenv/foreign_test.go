package testenv

import (
	"os"
	"strings"
	"testing"
)

func TestForeignSeries(t *testing.T) {
	fs := ForeignSeries(t)
	if len(fs) != 15 {
		t.Errorf("%d foreign series, want the 15 the README lists", len(fs))
	}
	for _, f := range fs {
		if !strings.Contains(f.Source, "repo:") {
			t.Errorf("%s: SOURCE.txt names no repository: %q", f.Name, f.Source)
		}
		if _, err := os.Stat(f.Path); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}
