package gitdb

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Errors a lookup can end with. ErrDamaged wraps every report of a damaged
// or unreadable repository.
var (
	ErrNotFound = errors.New("object not found")
	ErrDamaged  = errors.New("repository is damaged or unreadable")
)

// Hash is a SHA-1 object id.
type Hash [20]byte

// String returns the id in hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero id.
func (h Hash) IsZero() bool { return h == Hash{} }

// ParseHash parses a full 40-digit hex id (either case).
func ParseHash(s string) (Hash, bool) {
	var h Hash
	if len(s) != 40 {
		return h, false
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, false
	}
	return h, true
}

// Type is an object type, numbered as in packs.
type Type int8

// The object types.
const (
	Commit Type = 1
	Tree   Type = 2
	Blob   Type = 3
	Tag    Type = 4
)

// String returns git's name of the type.
func (t Type) String() string {
	switch t {
	case Commit:
		return "commit"
	case Tree:
		return "tree"
	case Blob:
		return "blob"
	case Tag:
		return "tag"
	}
	return "type " + strconv.Itoa(int(t))
}

func typeByName(s string) (Type, bool) {
	for t := Commit; t <= Tag; t++ {
		if t.String() == s {
			return t, true
		}
	}
	return 0, false
}

// DB is a repository opened for reading. It is safe for concurrent use.
type DB struct {
	GitDir    string // the repository's git directory (a worktree's own)
	CommonDir string // where objects and refs live (GitDir unless a worktree)

	mu         sync.Mutex
	dirs       []*objDir
	packedRefs map[string]Hash // loaded on first use
	packedErr  error
	locked     objReader // the reader of callers that hold mu
	readers    sync.Pool // *objReader for Read, which holds mu only to find
}

// objReader reads objects with its own inflater and pack buffer, so that
// Read can inflate a large blob without holding the DB's lock: other
// lookups and reads go on meanwhile.
type objReader struct {
	db     *DB
	locked bool          // its caller holds db.mu
	zr     io.ReadCloser // reused inflater
	br     *bufio.Reader // reused reader of packs
}

// find locates h, taking the DB's lock unless the caller holds it.
func (r *objReader) find(h Hash) (location, error) {
	if !r.locked {
		r.db.mu.Lock()
		defer r.db.mu.Unlock()
	}
	return r.db.find(h)
}

// objDir is one object directory: the repository's or an alternate.
type objDir struct {
	path   string
	packs  []*pack
	noIdx  []string // packs without an index (invisible to git: damage)
	listed bool
	err    error
}

// Open opens the repository whose git directory is gitDir (for a worktree,
// its own directory under the main repository's worktrees/). It reads the
// alternates and lists the packs, nothing else.
func Open(gitDir string) (*DB, error) {
	db := &DB{GitDir: gitDir, CommonDir: gitDir}
	db.locked = objReader{db: db, locked: true}
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		db.CommonDir = filepath.Clean(c)
	}
	if err := checkFormat(db.CommonDir); err != nil {
		return nil, err
	}
	objects := filepath.Join(db.CommonDir, "objects")
	if st, err := os.Stat(objects); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a readable object directory", ErrDamaged, objects)
	}
	if err := db.addDir(objects, 0); err != nil {
		return nil, err
	}
	return db, nil
}

// ErrUnsupportedFormat is a repository whose format kpatch does not read.
var ErrUnsupportedFormat = errors.New("repository format kpatch does not read")

// checkFormat refuses repositories with SHA-256 object ids or reftable
// references (git's extensions.objectFormat and extensions.refStorage),
// which would otherwise look empty or damaged.
func checkFormat(commonDir string) error {
	b, err := os.ReadFile(filepath.Join(commonDir, "config"))
	if err != nil {
		return nil // git itself runs without a config
	}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if section != "extensions" || !ok {
			continue
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.ToLower(strings.Trim(strings.TrimSpace(val), `"`))
		switch {
		case key == "objectformat" && val != "sha1":
			return fmt.Errorf("%w: %s object ids (extensions.objectFormat); kpatch reads SHA-1 repositories", ErrUnsupportedFormat, val)
		case key == "refstorage" && val != "files":
			return fmt.Errorf("%w: %s references (extensions.refStorage); kpatch reads loose and packed refs", ErrUnsupportedFormat, val)
		}
	}
	return nil
}

// addDir adds an object directory and, recursively, its alternates (git
// follows them 5 deep).
func (db *DB) addDir(path string, depth int) error {
	for _, d := range db.dirs {
		if d.path == path {
			return nil
		}
	}
	db.dirs = append(db.dirs, &objDir{path: path})
	altFile := filepath.Join(path, "info", "alternates")
	b, err := os.ReadFile(altFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%w: %s: %v", ErrDamaged, altFile, err)
	}
	if depth >= 5 {
		return fmt.Errorf("%w: %s: alternates nested more than 5 deep", ErrDamaged, altFile)
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			if u, err := strconv.Unquote(line); err == nil {
				line = u
			}
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(path, line)
		}
		line = filepath.Clean(line)
		if st, err := os.Stat(line); err != nil || !st.IsDir() {
			return fmt.Errorf("%w: %s names %s, which is not a readable object directory", ErrDamaged, altFile, line)
		}
		if err := db.addDir(line, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// list finds the packs of d (once).
func (d *objDir) list() error {
	if d.listed {
		return d.err
	}
	d.listed = true
	dir := filepath.Join(d.path, "pack")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		d.err = fmt.Errorf("%w: %s: %v", ErrDamaged, dir, err)
		return d.err
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name()] = true
	}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") {
			continue
		}
		switch {
		case strings.HasSuffix(n, ".idx"):
			base := strings.TrimSuffix(n, ".idx")
			d.packs = append(d.packs, &pack{idxPath: filepath.Join(dir, n), packPath: filepath.Join(dir, base+".pack")})
		case strings.HasSuffix(n, ".pack"):
			if !names[strings.TrimSuffix(n, ".pack")+".idx"] {
				d.noIdx = append(d.noIdx, filepath.Join(dir, n))
			}
		}
	}
	return nil
}

// location is where an object is stored.
type location struct {
	pack *pack // nil for a loose object
	// The pack's file and size when found: a Read that does not hold
	// the lock must not see Close clear them.
	f    *os.File
	size int64
	off  int64
	path string // the loose object's file
}

// find locates h: packs first, then loose objects, as git looks.
func (db *DB) find(h Hash) (location, error) {
	for _, d := range db.dirs {
		if err := d.list(); err != nil {
			return location{}, err
		}
		for _, p := range d.packs {
			off, ok, err := p.lookup(h)
			if err != nil {
				return location{}, err
			}
			if ok {
				return location{pack: p, f: p.f, size: p.size, off: off}, nil
			}
		}
	}
	hx := h.String()
	for _, d := range db.dirs {
		path := filepath.Join(d.path, hx[:2], hx[2:])
		if _, err := os.Lstat(path); err == nil {
			return location{path: path}, nil
		}
	}
	return location{}, db.notFound(h)
}

// notFound is the error for an absent object: plain ErrNotFound, or damage
// when a pack without an index may hold it.
func (db *DB) notFound(h Hash) error {
	for _, d := range db.dirs {
		if len(d.noIdx) > 0 {
			return fmt.Errorf("%w: object %s is missing (%s has no index, .idx)", ErrDamaged, h, d.noIdx[0])
		}
	}
	return fmt.Errorf("%s: %w", h, ErrNotFound)
}

// Has reports whether the object exists (without reading it).
func (db *DB) Has(h Hash) (bool, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	_, err := db.find(h)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Read returns an object's type and content. An absent object is an error
// matching ErrNotFound (or ErrDamaged when a pack without an index may hold
// it); an object that cannot be read matches ErrDamaged.
func (db *DB) Read(h Hash) (Type, []byte, error) {
	r, _ := db.readers.Get().(*objReader)
	if r == nil {
		r = &objReader{db: db}
	}
	defer db.readers.Put(r)
	return r.read(h)
}

// read is Read for a caller that holds mu.
func (db *DB) read(h Hash) (Type, []byte, error) {
	return db.locked.read(h)
}

func (r *objReader) read(h Hash) (Type, []byte, error) {
	loc, err := r.find(h)
	if err != nil {
		return 0, nil, err
	}
	var t Type
	var data []byte
	if loc.pack != nil {
		t, data, err = r.readPacked(loc.f, loc.size, loc.off, 0)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: object %s in %s: %v", ErrDamaged, h, loc.pack.packPath, stripDamaged(err))
		}
	} else {
		t, data, err = r.readLoose(loc.path, h)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: object %s (%s): %v", ErrDamaged, h, loc.path, stripDamaged(err))
		}
	}
	return t, data, nil
}

// stripDamaged drops a nested ErrDamaged prefix so that a message says it
// once.
func stripDamaged(err error) string {
	return strings.TrimPrefix(err.Error(), ErrDamaged.Error()+": ")
}

// inflate decompresses src into exactly size bytes and checks that the
// stream ends there.
func (r *objReader) inflate(src io.Reader, size int64) ([]byte, error) {
	if err := r.zr0(src); err != nil {
		return nil, err
	}
	if size < 0 || size > 1<<34 {
		return nil, fmt.Errorf("implausible size %d", size)
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(r.zr, out); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("inflates to fewer than %d bytes", size)
		}
		return nil, err
	}
	var one [1]byte
	if n, err := r.zr.Read(one[:]); n != 0 || err != io.EOF {
		if n != 0 || err == nil {
			return nil, fmt.Errorf("inflates to more than %d bytes", size)
		}
		return nil, err
	}
	return out, nil
}

func (r *objReader) readLoose(path string, h Hash) (Type, []byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	if err := r.zr0(bytes.NewReader(raw)); err != nil {
		return 0, nil, err
	}
	data, err := io.ReadAll(r.zr)
	if err != nil {
		return 0, nil, err
	}
	if sum := sha1.Sum(data); sum != h {
		return 0, nil, fmt.Errorf("hash mismatch (content hashes to %x)", sum)
	}
	nul := bytes.IndexByte(data, 0)
	if nul < 0 {
		return 0, nil, errors.New("no object header")
	}
	tn, sz, ok := strings.Cut(string(data[:nul]), " ")
	t, tok := typeByName(tn)
	n, err := strconv.Atoi(sz)
	if !ok || !tok || err != nil || n != len(data)-nul-1 {
		return 0, nil, fmt.Errorf("bad object header %q", data[:nul])
	}
	return t, data[nul+1:], nil
}

// zr0 points the reused inflater at src.
func (r *objReader) zr0(src io.Reader) error {
	if r.zr == nil {
		zr, err := zlib.NewReader(src)
		if err != nil {
			return err
		}
		r.zr = zr
		return nil
	}
	return r.zr.(zlib.Resetter).Reset(src, nil)
}

// FindPrefix returns the objects whose hex id starts with prefix (at least
// 4 hex digits, either case), in every object directory, sorted; at most
// limit of them.
func (db *DB) FindPrefix(prefix string, limit int) ([]Hash, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.findPrefixLocked(prefix, limit)
}

func (db *DB) findPrefixLocked(prefix string, limit int) ([]Hash, error) {
	prefix = strings.ToLower(prefix)
	if len(prefix) < 2 {
		return nil, fmt.Errorf("prefix %q too short", prefix)
	}
	seen := map[Hash]bool{}
	var out []Hash
	add := func(h Hash) {
		if !seen[h] && len(out) < limit {
			seen[h] = true
			out = append(out, h)
		}
	}
	for _, d := range db.dirs {
		if err := d.list(); err != nil {
			return nil, err
		}
		for _, p := range d.packs {
			if err := p.findPrefix(prefix, limit, add); err != nil {
				return nil, err
			}
		}
		ents, err := os.ReadDir(filepath.Join(d.path, prefix[:2]))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		for _, e := range ents {
			if strings.HasPrefix(prefix[:2]+e.Name(), prefix) {
				if h, ok := ParseHash(prefix[:2] + e.Name()); ok {
					add(h)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	return out, nil
}

// Close closes the packs and their index files.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, d := range db.dirs {
		for _, p := range d.packs {
			p.close()
		}
	}
	return nil
}
