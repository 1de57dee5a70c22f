// Package kernelsrc reads the kernel tree a series is generated against:
// a git repository read at a revision (with its own reader, internal/gitdb),
// without touching its working tree, index or HEAD, or a plain directory
// read as it is. It also records new objects and a new branch in the
// repository, for kpatch gen --branch.
package kernelsrc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"kpatch/plumbing/kernelsrc/internal/gitdb"
)

// Sentinel errors for the ways a tree can be unusable.
var (
	ErrNotKernel   = errors.New("not a Linux kernel tree")
	ErrUnknownRev  = errors.New("unknown revision")
	ErrNotAGitRepo = errors.New("not a git repository")
	// ErrDamaged is a repository that cannot be read as git would: a
	// missing or corrupt object, a pack without its index or truncated,
	// alternates that lead nowhere.
	ErrDamaged = gitdb.ErrDamaged
)

// Tree is a kernel source tree at a base.
type Tree struct {
	Dir    string // the directory given
	Base   string // the revision asked for (a label for a plain directory)
	Commit Hash   // the base commit, zero for a plain directory
	gitDir string // "" for a plain directory
	db     *gitdb.DB
	root   gitdb.Hash
	trees  map[string][]gitdb.Entry // parsed trees by directory path ("" the top)
	// mu serializes reads of the git objects.
	mu sync.Mutex
	// damage is the first damage Exists, IsDir or Mode met (they cannot
	// return it); Err returns it.
	damage error
}

// kernelMarkers are files every kernel tree has.
var kernelMarkers = []string{"MAINTAINERS", "Kconfig", "kernel/fork.c", "arch/x86/Kconfig"}

// OpenGit opens dir as a git repository and resolves base as git rev-parse
// --verify BASE^{commit} would. It reads objects only: the base commit,
// then the trees and blobs asked for.
func OpenGit(dir, base string) (*Tree, error) {
	gitDir, err := findGitDir(dir)
	if err != nil {
		return nil, err
	}
	db, err := gitdb.Open(gitDir)
	if errors.Is(err, gitdb.ErrUnsupportedFormat) {
		return nil, fmt.Errorf("%s: %w: convert it or clone it as a SHA-1 repository with loose and packed refs", dir, err)
	}
	if err != nil {
		return nil, damaged(dir, err)
	}
	h, err := db.ResolveCommit(base)
	switch {
	case errors.Is(err, gitdb.ErrDamaged):
		return nil, damaged(dir, err)
	case err != nil:
		return nil, revError{fmt.Errorf("%q in %s: %w: give a tag, branch or commit of that repository with --base", base, dir, err)}
	}
	_, data, err := db.Read(h)
	if err != nil {
		return nil, damaged(dir, err)
	}
	c, err := gitdb.ParseCommit(data)
	if err != nil {
		return nil, damaged(dir, fmt.Errorf("commit %s: %v", h, err))
	}
	tr := &Tree{Dir: dir, Base: base, Commit: h, gitDir: gitDir, db: db, root: c.Tree, trees: map[string][]gitdb.Entry{}}
	if _, err := tr.dirEntries(""); err != nil {
		return nil, err
	}
	return tr, tr.checkKernel()
}

// revError is a --base that does not name a commit of the repository
// (unknown, ambiguous, not a commit, or a form kpatch does not read): it
// matches ErrUnknownRev and the gitdb error it wraps.
type revError struct{ err error }

func (e revError) Error() string        { return e.err.Error() }
func (e revError) Unwrap() error        { return e.err }
func (e revError) Is(target error) bool { return target == ErrUnknownRev }

// damaged is the one-line error for a repository git cannot read either.
func damaged(dir string, err error) error {
	msg := err.Error()
	if !errors.Is(err, gitdb.ErrDamaged) {
		err = fmt.Errorf("%w: %s", gitdb.ErrDamaged, msg)
	}
	return fmt.Errorf("%s: %w: run git fsck there, then repair it or clone it again", dir, err)
}

// findGitDir returns the git directory of dir: dir itself for a bare
// repository, the directory a .git file names (a worktree, a submodule),
// or dir/.git.
func findGitDir(dir string) (string, error) {
	gitDir := filepath.Join(dir, ".git")
	if isBare(dir) {
		gitDir = dir
	} else if b, err := os.ReadFile(gitDir); err == nil {
		// A .git file: "gitdir: PATH" (a worktree or a submodule).
		p := strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir:"))
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		gitDir = p
	}
	if st, err := os.Stat(gitDir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%s: %w", dir, ErrNotAGitRepo)
	}
	return gitDir, nil
}

// Hash is a git object id.
type Hash = gitdb.Hash

// Entry is an entry of a git tree: mode, name and object id.
type Entry = gitdb.Entry

// ObjectType is a git object type.
type ObjectType = gitdb.Type

// The object types.
const (
	CommitObject = gitdb.Commit
	TreeObject   = gitdb.Tree
	BlobObject   = gitdb.Blob
)

// HashObject returns the id git gives an object of type t and content.
func HashObject(t ObjectType, content []byte) Hash { return gitdb.HashObject(t, content) }

// BlobID returns the id git gives a file of that content, in hexadecimal
// (the ids of "index" lines, abbreviated there).
func BlobID(content []byte) string { return HashObject(BlobObject, content).String() }

// ErrBranchExists is returned by CreateBranch for a branch that exists.
var ErrBranchExists = gitdb.ErrRefExists

// HasBranch reports whether the repository has branch name.
func (t *Tree) HasBranch(name string) (bool, error) {
	if t.db == nil {
		return false, fmt.Errorf("%s: %w", t.Dir, ErrNotAGitRepo)
	}
	_, ok, err := t.db.Ref("refs/heads/" + name)
	return ok, err
}

// WriteObject stores an object in the repository as a loose object, as
// git does, and returns its id.
func (t *Tree) WriteObject(typ ObjectType, content []byte) (Hash, error) {
	if t.db == nil {
		return Hash{}, fmt.Errorf("%s: %w", t.Dir, ErrNotAGitRepo)
	}
	return t.db.WriteObject(typ, content)
}

// CreateBranch creates branch name at commit id; an existing branch is
// refused with an error matching ErrBranchExists. Only the branch's ref is
// written: HEAD, the index and the working tree are left alone.
func (t *Tree) CreateBranch(name string, id Hash) error {
	if t.db == nil {
		return fmt.Errorf("%s: %w", t.Dir, ErrNotAGitRepo)
	}
	return t.db.CreateRef("refs/heads/"+name, id)
}

// isBare reports whether dir is a bare repository (a mirror, as many
// kernel developers keep): HEAD, objects/ and refs/ at its top.
func isBare(dir string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false
		}
	}
	return true
}

// OpenDir opens a plain directory; base only labels the output.
func OpenDir(dir, base string) (*Tree, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist: %w: give one with --tree (a git repository or a source directory)", dir, ErrNotKernel)
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory: %w: give a kernel tree with --tree", dir, ErrNotKernel)
	}
	tr := &Tree{Dir: dir, Base: base}
	return tr, tr.checkKernel()
}

// Open opens dir as a git repository when it is one and plain is false,
// else as a plain directory.
func Open(dir, base string, plain bool) (*Tree, error) {
	if !plain {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil || isBare(dir) {
			return OpenGit(dir, base)
		}
	}
	return OpenDir(dir, base)
}

func (t *Tree) checkKernel() error {
	for _, m := range kernelMarkers {
		ok, err := t.exists(m)
		if err != nil {
			return err
		}
		if !ok {
			what := t.Dir
			if t.db != nil {
				what += " at " + t.Base
			}
			return fmt.Errorf("%s: %w (no %s): run kpatch in a kernel tree or give one with --tree", what, ErrNotKernel, m)
		}
	}
	return nil
}

// IsGit reports whether the tree is read from git objects.
func (t *Tree) IsGit() bool { return t.db != nil }

// Err returns the first damage of the repository that Exists, IsDir or
// Mode met and could not return, or nil.
func (t *Tree) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.damage
}

// dirEntries returns the entries of directory path ("" the top) at the
// base; nil, nil when there is no such directory. The caller holds mu
// (or is OpenGit).
func (t *Tree) dirEntries(path string) ([]gitdb.Entry, error) {
	if ents, ok := t.trees[path]; ok {
		return ents, nil
	}
	h := t.root
	if path != "" {
		e, ok, err := t.lookup(path)
		if err != nil || !ok || !e.IsDir() {
			return nil, err
		}
		h = e.Hash
	}
	what := "tree " + h.String() + " (" + path + "/ at " + t.Base + ")"
	if path == "" {
		what = "tree " + h.String() + " (the top of commit " + t.Commit.String() + ")"
	}
	typ, data, err := t.db.Read(h)
	if errors.Is(err, gitdb.ErrNotFound) {
		return nil, damaged(t.Dir, fmt.Errorf("%s is missing", what))
	}
	if err != nil {
		return nil, damaged(t.Dir, err)
	}
	if typ != gitdb.Tree {
		return nil, damaged(t.Dir, fmt.Errorf("%s is a %s", what, typ))
	}
	ents, err := gitdb.ParseTree(data)
	if err != nil {
		return nil, damaged(t.Dir, fmt.Errorf("%s: %v", what, err))
	}
	t.trees[path] = ents
	return ents, nil
}

// lookup finds the entry of path; ok is false when the base has no such
// path. The caller holds mu.
func (t *Tree) lookup(path string) (gitdb.Entry, bool, error) {
	dir, name := "", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir, name = path[:i], path[i+1:]
	}
	if name == "" {
		return gitdb.Entry{}, false, nil
	}
	ents, err := t.dirEntries(dir)
	if err != nil || ents == nil {
		return gitdb.Entry{}, false, err
	}
	for _, e := range ents {
		if e.Name == name {
			return e, true, nil
		}
	}
	return gitdb.Entry{}, false, nil
}

// exists is Exists with the error.
func (t *Tree) exists(path string) (bool, error) {
	if t.db == nil {
		_, err := os.Stat(filepath.Join(t.Dir, filepath.FromSlash(path)))
		return err == nil, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok, err := t.lookup(path)
	return ok, err
}

// note records the first damage met by a method that cannot return it.
func (t *Tree) note(err error) {
	if err != nil && t.damage == nil {
		t.damage = err
	}
}

// ReadFile returns a file of the tree at the base; a missing file is an
// error matching fs.ErrNotExist, a file the repository should have but
// cannot give one matching ErrDamaged.
//
// Damage is also recorded for Err, so that a caller that wraps the error
// in its own (a hook that could not read its file) can still report the
// damage itself.
func (t *Tree) ReadFile(path string) ([]byte, error) {
	if t.db == nil {
		return os.ReadFile(filepath.Join(t.Dir, filepath.FromSlash(path)))
	}
	data, err := t.readFile(path)
	if errors.Is(err, ErrDamaged) {
		t.mu.Lock()
		t.note(err)
		t.mu.Unlock()
	}
	return data, err
}

// readFile reads path from the git objects. It holds mu only to find the
// entry, so that other lookups go on while a large blob inflates.
func (t *Tree) readFile(path string) ([]byte, error) {
	t.mu.Lock()
	e, ok, err := t.lookup(path)
	t.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s at %s: %w", path, t.Base, fs.ErrNotExist)
	}
	if e.IsDir() {
		return nil, fmt.Errorf("%s at %s: is a directory, not a file", path, t.Base)
	}
	typ, data, err := t.db.Read(e.Hash)
	if errors.Is(err, gitdb.ErrNotFound) {
		return nil, damaged(t.Dir, fmt.Errorf("blob %s (%s at %s) is missing", e.Hash, path, t.Base))
	}
	if err != nil {
		return nil, damaged(t.Dir, fmt.Errorf("%s at %s: %v", path, t.Base, err))
	}
	if typ != gitdb.Blob {
		return nil, damaged(t.Dir, fmt.Errorf("%s at %s: object %s is a %s, not a blob", path, t.Base, e.Hash, typ))
	}
	return data, nil
}

// BlobHash returns the id of the blob path has at the base, as the base's
// tree records it (what git shows on "index" lines without hashing the
// file), and false for a plain directory or a path that is not a file
// there (or not a regular file).
func (t *Tree) BlobHash(path string) (Hash, bool) {
	if t.db == nil {
		return Hash{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok, err := t.lookup(path)
	t.note(err)
	if !ok || e.Mode&0o170000 != 0o100000 { // a regular file's blob only
		return Hash{}, false
	}
	return e.Hash, true
}

// Exists reports whether path exists in the tree at the base.
func (t *Tree) Exists(path string) bool {
	ok, err := t.exists(path)
	if err != nil {
		t.mu.Lock()
		t.note(err)
		t.mu.Unlock()
	}
	return ok
}

// Mode returns the git mode of the file at path ("100644", "100755"), and
// "100644" for a plain directory's regular files or a missing file.
func (t *Tree) Mode(path string) string {
	if t.db == nil {
		if st, err := os.Stat(filepath.Join(t.Dir, filepath.FromSlash(path))); err == nil && st.Mode()&0o111 != 0 {
			return "100755"
		}
		return "100644"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok, err := t.lookup(path)
	t.note(err)
	if ok {
		return fmt.Sprintf("%06o", e.Mode)
	}
	return "100644"
}

// Entries returns the entries of directory path ("" for the top) of the
// base tree in git's order, or nil for a directory the base lacks or a
// plain directory.
func (t *Tree) Entries(path string) ([]Entry, error) {
	if t.db == nil {
		return nil, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ents, err := t.dirEntries(path)
	if err != nil || ents == nil {
		return nil, err
	}
	return append([]Entry(nil), ents...), nil
}

// IsDir reports whether path is a directory of the tree at the base.
func (t *Tree) IsDir(path string) bool {
	if t.db == nil {
		st, err := os.Stat(filepath.Join(t.Dir, filepath.FromSlash(path)))
		return err == nil && st.IsDir()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if path == "" {
		return true
	}
	e, ok, err := t.lookup(path)
	t.note(err)
	return ok && e.IsDir()
}
