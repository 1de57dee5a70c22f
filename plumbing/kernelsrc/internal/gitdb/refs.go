package gitdb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// isRootRef reports whether name is one of the all-capitals references git
// keeps at the top of the git directory (HEAD, ORIG_HEAD, FETCH_HEAD, ...).
func isRootRef(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return name == "HEAD" || strings.HasSuffix(name, "_HEAD")
}

// Ref resolves a full reference name ("HEAD", "refs/tags/v6.12"),
// following symbolic references. ok is false when it does not exist.
func (db *DB) Ref(name string) (h Hash, ok bool, err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.ref(name, 0)
}

func (db *DB) ref(name string, depth int) (Hash, bool, error) {
	if depth > 5 {
		return Hash{}, false, fmt.Errorf("%w: symbolic reference %s: too many levels", ErrDamaged, name)
	}
	if !isRootRef(name) && !strings.HasPrefix(name, "refs/") {
		return Hash{}, false, nil
	}
	dir := db.CommonDir
	if isRootRef(name) {
		dir = db.GitDir
	}
	path := filepath.Join(dir, filepath.FromSlash(name))
	b, err := os.ReadFile(path)
	if err == nil {
		line := string(b)
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i] // FETCH_HEAD has more lines
		}
		line = strings.TrimSpace(line)
		if target, ok := strings.CutPrefix(line, "ref:"); ok {
			return db.ref(strings.TrimSpace(target), depth+1)
		}
		if len(line) > 40 && (line[40] == '\t' || line[40] == ' ') {
			line = line[:40]
		}
		h, ok := ParseHash(line)
		if !ok {
			return Hash{}, false, fmt.Errorf("%w: reference %s (%s) holds %.50q, not an object id", ErrDamaged, name, path, line)
		}
		return h, true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		// A directory of refs/ is not a reference, nor is a path below a
		// reference (refs/heads/a/b where refs/heads/a is one); anything
		// else that cannot be read is damage.
		if st, serr := os.Stat(path); serr != nil || !st.IsDir() {
			return Hash{}, false, fmt.Errorf("%w: reference %s: %v", ErrDamaged, name, err)
		}
	}
	if !strings.HasPrefix(name, "refs/") {
		return Hash{}, false, nil
	}
	if err := db.loadPackedRefs(); err != nil {
		return Hash{}, false, err
	}
	h, ok := db.packedRefs[name]
	return h, ok, nil
}

// loadPackedRefs reads packed-refs once.
func (db *DB) loadPackedRefs() error {
	if db.packedRefs != nil || db.packedErr != nil {
		return db.packedErr
	}
	db.packedRefs = map[string]Hash{}
	path := filepath.Join(db.CommonDir, "packed-refs")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		db.packedErr = fmt.Errorf("%w: %s: %v", ErrDamaged, path, err)
		return db.packedErr
	}
	for n, line := range strings.Split(string(b), "\n") {
		n++
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		hx, name, ok := strings.Cut(line, " ")
		h, hok := ParseHash(hx)
		if !ok || !hok {
			db.packedErr = fmt.Errorf("%w: %s:%d: not \"<id> <name>\"", ErrDamaged, path, n)
			return db.packedErr
		}
		db.packedRefs[name] = h
	}
	return nil
}

// RefNames returns the names of every reference under refs/, loose and
// packed, sorted (a name that is both is listed once).
func (db *DB) RefNames() ([]string, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.packedRefs, db.packedErr = nil, nil // read packed-refs afresh
	if err := db.loadPackedRefs(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for name := range db.packedRefs {
		seen[name] = true
	}
	root := filepath.Join(db.CommonDir, "refs")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, err := filepath.Rel(db.CommonDir, p)
		if err != nil {
			return err
		}
		seen[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}
