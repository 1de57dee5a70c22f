package gitdb

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kpatch/internal/gittest"
)

// cacheRepo makes a repository with a large file (kept by the cache), a
// small one (not kept), packed by git, and returns it with their ids.
func cacheRepo(t *testing.T) (dir string, large, small Hash, largeText []byte) {
	t.Helper()
	gittest.Require(t)
	dir = t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 3*CacheMin; i++ {
		b.WriteString("F:\tkernel/unwind/ line of a large file, like MAINTAINERS ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	largeText = []byte(b.String())
	gittest.Run(t, dir, "init", "-q", "-b", "master")
	if err := os.WriteFile(filepath.Join(dir, "MAINTAINERS"), largeText, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small"), []byte("small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "one")
	gittest.Run(t, dir, "repack", "-q", "-a", "-d")
	id := func(rev string) Hash {
		h, ok := ParseHash(strings.TrimSpace(string(gittest.Run(t, dir, "rev-parse", rev))))
		if !ok {
			t.Fatalf("rev-parse %s", rev)
		}
		return h
	}
	return dir, id("HEAD:MAINTAINERS"), id("HEAD:small"), largeText
}

// TestCache reads objects through a cache: the large one is kept as git
// hashes it and read back from there, the small one is not kept, a kept
// file that does not hash to its name is removed and the object read from
// the repository again, a cache that cannot be written changes nothing of
// what Read returns, and an object the repository lost is missing even
// with a kept copy (damage is reported, not hidden).
func TestCache(t *testing.T) {
	dir, large, small, largeText := cacheRepo(t)
	open := func(cache string) *DB {
		db, err := Open(filepath.Join(dir, ".git"))
		if err != nil {
			t.Fatal(err)
		}
		db.SetCache(cache)
		return db
	}
	read := func(db *DB, h Hash) []byte {
		t.Helper()
		typ, data, err := db.Read(h)
		if err != nil {
			t.Fatal(err)
		}
		if typ != Blob {
			t.Fatalf("%s: type %v, want blob", h, typ)
		}
		return data
	}
	cache := t.TempDir()
	kept := filepath.Join(cache, large.String()[:2], large.String()[2:])

	if got := read(open(cache), large); !bytes.Equal(got, largeText) {
		t.Fatalf("first read: %d bytes, want the file's %d", len(got), len(largeText))
	}
	raw, err := os.ReadFile(kept)
	if err != nil {
		t.Fatalf("the large object was not kept: %v", err)
	}
	if want := append(header(Blob, len(largeText)), largeText...); !bytes.Equal(raw, want) {
		t.Errorf("kept file: %d bytes, want git's object (%d bytes)", len(raw), len(want))
	}
	read(open(cache), small)
	if _, err := os.Stat(filepath.Join(cache, small.String()[:2], small.String()[2:])); err == nil {
		t.Errorf("the small object (%d bytes) was kept; only objects of %d bytes and more are", len("small\n"), CacheMin)
	}

	// Read back from the cache: the pack's data is overwritten (its index
	// still lists the object), so only the kept file can give it.
	packFile := ""
	ents, _ := os.ReadDir(filepath.Join(dir, ".git", "objects", "pack"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pack") {
			packFile = filepath.Join(dir, ".git", "objects", "pack", e.Name())
		}
	}
	packData, err := os.ReadFile(packFile)
	if err != nil {
		t.Fatal(err)
	}
	zeroed := bytes.Clone(packData)
	clear(zeroed[12 : len(zeroed)-20])
	os.Chmod(packFile, 0o644)
	if err := os.WriteFile(packFile, zeroed, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(open(cache), large); !bytes.Equal(got, largeText) {
		t.Errorf("read from the cache: %d bytes, want %d", len(got), len(largeText))
	}
	if err := os.WriteFile(packFile, packData, 0o644); err != nil {
		t.Fatal(err)
	}

	// A damaged kept file: the same size, one byte changed.
	bad := bytes.Clone(raw)
	bad[len(bad)-2] ^= 1
	if err := os.WriteFile(kept, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(open(cache), large); !bytes.Equal(got, largeText) {
		t.Errorf("with a damaged kept file: got %d bytes that differ from the object", len(got))
	}
	if again, err := os.ReadFile(kept); err != nil || !bytes.Equal(again, raw) {
		t.Errorf("the damaged kept file was not written again (%v)", err)
	}

	// A cache that cannot be written: a file where its directory would be.
	blocked := filepath.Join(t.TempDir(), "cache")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(open(blocked), large); !bytes.Equal(got, largeText) {
		t.Errorf("with an unwritable cache: %d bytes, want %d", len(got), len(largeText))
	}

	// An object the repository lost is missing, kept copy or not.
	if err := os.Rename(filepath.Join(dir, ".git", "objects", "pack"), filepath.Join(t.TempDir(), "pack")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := open(cache).Read(large); !errors.Is(err, ErrNotFound) {
		t.Errorf("the repository without the object: got %v, want ErrNotFound", err)
	}
}

// TestCacheStaleTemps checks that keeping an object removes the temporary
// files of writers that stopped an hour or more ago, and leaves a recent
// one (a writer still at work) alone.
func TestCacheStaleTemps(t *testing.T) {
	dir, large, _, _ := cacheRepo(t)
	cache := t.TempDir()
	sub := filepath.Join(cache, large.String()[:2])
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	stale, fresh := filepath.Join(sub, ".tmp-stale"), filepath.Join(sub, ".tmp-fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	db, err := Open(filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetCache(cache)
	if _, _, err := db.Read(large); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s (two hours old) is still there", stale)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("%s (new) was removed: %v", fresh, err)
	}
}
