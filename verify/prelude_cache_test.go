package verify

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"kpatch/verify/cunit"
)

// TestPreludeUnitsKept: with a cache directory, the prelude's units a run
// parses are kept on disk, and a later run (another process: the
// in-process sharing emptied) reads them instead of parsing, with the same
// findings as a run without the cache.
func TestPreludeUnitsKept(t *testing.T) {
	s := seed(t)
	plain := Run(s, Options{})
	dir := t.TempDir()
	cunit.ResetShared()
	first := Run(s, Options{PreprocessCache: dir})
	kept, _ := filepath.Glob(filepath.Join(dir, "*", "*.gob"))
	if len(kept) == 0 {
		t.Fatal("no unit kept in the cache")
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, k := range kept {
		os.Chtimes(k, old, old)
	}
	cunit.ResetShared()
	second := Run(s, Options{PreprocessCache: dir})
	read := 0
	for _, k := range kept {
		if st, err := os.Stat(k); err == nil && st.ModTime().After(old.Add(time.Hour)) {
			read++
		}
	}
	if read == 0 {
		t.Errorf("the second run read none of the %d kept units", len(kept))
	}
	if !reflect.DeepEqual(plain, first) || !reflect.DeepEqual(plain, second) {
		t.Errorf("findings differ: %d without the cache, %d filling it, %d reading it", len(plain), len(first), len(second))
	}
}
