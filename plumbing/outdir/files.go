package outdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Change is the new content of one file under a directory.
type Change struct {
	Path string // relative to the directory, slash-separated
	Data []byte
}

// journalName is the file ReplaceFiles writes in the directory once every
// new content is on disk, and removes once every file is replaced: while
// it exists, the change is decided and Recover completes it.
const journalName = ".kpatch-journal"

// tmpMark is in the name of every temporary file ReplaceFiles writes
// (".NAME.kpatch-tmp-XXXX" beside NAME); older kpatch versions wrote
// "NAME.kpatch-tmp".
const tmpMark = ".kpatch-tmp"

// journalEntry is one rename of the journal: Tmp becomes Path.
type journalEntry struct {
	Tmp  string `json:"tmp"`
	Path string `json:"path"`
}

// ReplaceFiles changes the files of dir to the contents given, all of
// them or none, as any later reader sees them: every new content is
// written to a temporary file beside its file first; then a journal naming
// the renames is put in dir (the commit point); then the files are renamed
// into place and the journal removed. A run that fails or is killed before
// the commit point leaves every file as it was (Recover removes its
// temporary files); one killed after it is completed by Recover. The
// caller holds the directory's lock (Lock) and calls Recover first, so
// that no other run's change is in progress. A file keeps its mode; a new
// file gets 0644.
func ReplaceFiles(dir string, changes []Change) error {
	var entries []journalEntry
	done := false
	defer func() {
		if !done {
			for _, e := range entries {
				os.Remove(filepath.Join(dir, filepath.FromSlash(e.Tmp)))
			}
		}
	}()
	seen := map[string]bool{}
	for i, c := range changes {
		rel := filepath.Clean(filepath.FromSlash(c.Path))
		if rel == "." || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%s: %q is not a file under it", dir, c.Path)
		}
		if seen[rel] {
			return fmt.Errorf("%s: %s is changed twice", dir, c.Path)
		}
		seen[rel] = true
		path := filepath.Join(dir, rel)
		mode := os.FileMode(0o644)
		if st, err := os.Stat(path); err == nil {
			if !st.Mode().IsRegular() {
				return fmt.Errorf("%s is not a regular file", path)
			}
			mode = st.Mode().Perm()
		}
		f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+tmpMark+"-*")
		if err != nil {
			return err
		}
		tmpRel, _ := filepath.Rel(dir, f.Name())
		entries = append(entries, journalEntry{Tmp: filepath.ToSlash(tmpRel), Path: filepath.ToSlash(rel)})
		_, err = f.Write(c.Data)
		if err == nil {
			err = f.Chmod(mode)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = step(fmt.Sprintf("file %d", i+1))
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	j, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	jf, err := os.CreateTemp(dir, journalName+tmpMark+"-*")
	if err != nil {
		return err
	}
	entries = append(entries, journalEntry{Tmp: filepath.Base(jf.Name())})
	_, err = jf.Write(j)
	if cerr := jf.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = step("journal")
	}
	if err == nil {
		err = os.Rename(jf.Name(), filepath.Join(dir, journalName))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	done = true // decided: Recover completes it from here
	if err := step("committed"); err != nil {
		return err
	}
	return finish(dir, entries[:len(entries)-1])
}

// finish does the renames of a journal and removes it.
func finish(dir string, entries []journalEntry) error {
	for i, e := range entries {
		tmp := filepath.Join(dir, filepath.FromSlash(e.Tmp))
		if _, err := os.Lstat(tmp); errors.Is(err, fs.ErrNotExist) {
			continue // renamed before a kill
		}
		if err := os.Rename(tmp, filepath.Join(dir, filepath.FromSlash(e.Path))); err != nil {
			return fmt.Errorf("%s: replacing %s: %w (the next kpatch run on it completes the change)", dir, e.Path, err)
		}
		if err := step(fmt.Sprintf("renamed %d", i+1)); err != nil {
			return err
		}
	}
	return os.Remove(filepath.Join(dir, journalName))
}

// Recover completes a change ReplaceFiles decided and did not finish (a
// killed run), and removes the temporary files of changes it had not
// decided. It reports whether there was anything to do. The caller holds
// the directory's lock.
func Recover(dir string) (bool, error) {
	did := false
	data, err := os.ReadFile(filepath.Join(dir, journalName))
	switch {
	case err == nil:
		var entries []journalEntry
		if err := json.Unmarshal(data, &entries); err != nil {
			return false, fmt.Errorf("%s: %s is damaged: %w", dir, journalName, err)
		}
		for _, e := range entries {
			if !strings.Contains(filepath.Base(e.Tmp), tmpMark) || strings.Contains(e.Tmp, "..") || strings.Contains(e.Path, "..") {
				return false, fmt.Errorf("%s: %s names %q: not a kpatch temporary file", dir, journalName, e.Tmp)
			}
		}
		if err := finish(dir, entries); err != nil {
			return false, err
		}
		did = true
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && strings.Count(strings.TrimPrefix(p, dir), string(filepath.Separator)) > 3 {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.Contains(d.Name(), tmpMark) {
			did = true
			return os.Remove(p)
		}
		return nil
	})
	return did, err
}
