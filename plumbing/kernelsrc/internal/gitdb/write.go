package gitdb

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// ErrRefExists is returned by CreateRef for a reference that exists.
var ErrRefExists = errors.New("reference already exists")

// header is the "TYPE SIZE\0" that precedes an object's content in its id.
func header(t Type, size int) []byte {
	b := append([]byte(t.String()), ' ')
	b = strconv.AppendInt(b, int64(size), 10)
	return append(b, 0)
}

// HashObject returns the id git gives an object of type t and content.
func HashObject(t Type, content []byte) Hash {
	h := sha1.New()
	h.Write(header(t, len(content)))
	h.Write(content)
	var id Hash
	h.Sum(id[:0])
	return id
}

// WriteObject stores an object as a loose object of the repository (unless
// the repository has it already) and returns its id. The file is written
// to a temporary name and renamed, as git does.
func (db *DB) WriteObject(t Type, content []byte) (Hash, error) {
	id := HashObject(t, content)
	db.mu.Lock()
	defer db.mu.Unlock()
	if _, err := db.find(id); err == nil {
		return id, nil
	}
	hx := id.String()
	dir := filepath.Join(db.dirs[0].path, hx[:2])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return id, err
	}
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(header(t, len(content)))
	zw.Write(content)
	if err := zw.Close(); err != nil {
		return id, err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return id, err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o444)
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, hx[2:]))
	}
	if err != nil {
		os.Remove(f.Name())
		return id, err
	}
	return id, nil
}

// CreateRef creates the reference name (such as "refs/heads/x") pointing
// to id, refusing one that exists, loose or packed. It takes git's lock
// (name.lock, created exclusively) and renames it into place.
func (db *DB) CreateRef(name string, id Hash) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.packedRefs, db.packedErr = nil, nil // read packed-refs afresh
	if _, ok, err := db.ref(name, 0); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%s: %w", name, ErrRefExists)
	}
	path := filepath.Join(db.CommonDir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: %s exists: another git process is updating it, or one crashed (then remove the file)", name, lock)
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(id.String() + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if _, serr := os.Lstat(path); serr == nil {
			err = fmt.Errorf("%s: %w", name, ErrRefExists)
		}
	}
	if err == nil {
		err = os.Rename(lock, path)
	}
	if err != nil {
		os.Remove(lock)
	}
	return err
}
