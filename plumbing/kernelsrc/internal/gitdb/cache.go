package gitdb

import (
	"bytes"
	"crypto/sha1"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// CacheMin is the size from which SetCache keeps an object: below it,
// inflating costs less than the cache's file.
const CacheMin = 16 << 10

// SetCache makes Read keep the objects of at least CacheMin bytes it
// inflates in dir, uncompressed, and take them from there afterwards.
//
// Generating a series reads the same few large blobs of its base on every
// run (MAINTAINERS is 780 KB, its zlib stream a quarter of what kpatch gen
// spent); read again, a kept object costs a map of its file and a SHA-1
// over it, about a tenth of inflating it, and its pages are the page
// cache's, not new memory of the process. A kept file holds the object as
// git hashes it, "<type> <size>\x00" and the content, under its id
// (dir/ab/cdef...): a file whose hash is not its name is removed and the
// object inflated again, so a damaged cache costs time, never content.
// Files are written whole under a temporary name and renamed, so two
// processes may share dir; the cache is only ever a copy, and removing dir
// at any time is safe.
//
// The content Read returns from the cache is mapped read-only: writing
// into it faults. Read's callers never change what it returns (kernelsrc
// hands the same content to every reader of a file). A mapping lives as
// long as the process (a content may be held anywhere); kpatch never
// rewrites a kept file in place (a rename replaces it, and a mapping keeps
// the file it mapped), so only a file changed in place by someone else
// while a kpatch process runs could change content it already checked.
func (db *DB) SetCache(dir string) {
	db.cacheDir = dir
}

// cachePath returns where object h is kept.
func (db *DB) cachePath(h Hash) string {
	s := h.String()
	return filepath.Join(db.cacheDir, s[:2], s[2:])
}

// cached returns object h from the cache, if it is kept there whole.
func (db *DB) cached(h Hash) (Type, []byte, bool) {
	p := db.cachePath(h)
	f, err := os.Open(p)
	if err != nil {
		return 0, nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < CacheMin || st.Size() > 1<<31 {
		return 0, nil, false
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return 0, nil, false
	}
	if sha1.Sum(m) != h {
		syscall.Munmap(m)
		os.Remove(p) // damaged: written again from the repository
		return 0, nil, false
	}
	// The hash matched, so the header is git's: "<type> <size>\x00".
	sp := bytes.IndexByte(m, ' ')
	nul := bytes.IndexByte(m, 0)
	t, ok := typeByName(string(m[:max(sp, 0)]))
	if sp < 0 || nul < sp || !ok {
		syscall.Munmap(m)
		return 0, nil, false
	}
	return t, m[nul+1:], true
}

// keep writes object h to the cache; a failure leaves the cache as it was
// (it is only a copy).
func (db *DB) keep(h Hash, t Type, content []byte) {
	dir := filepath.Dir(db.cachePath(h))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return
	}
	tmp := f.Name()
	_, err = f.Write(header(t, len(content)))
	if err == nil {
		_, err = f.Write(content)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, db.cachePath(h))
	}
	if err != nil {
		os.Remove(tmp)
		return
	}
	removeStaleTemps(dir)
}

// removeStaleTemps removes the temporary files of writers that did not
// finish (killed between writing and renaming) an hour or more ago.
func removeStaleTemps(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if len(e.Name()) < 5 || e.Name()[:5] != ".tmp-" {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// cacheable reports whether an object of n bytes is kept.
func (db *DB) cacheable(n int) bool {
	return db.cacheDir != "" && n >= CacheMin
}
