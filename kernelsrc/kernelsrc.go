// Package kernelsrc reads the kernel tree a series is generated against:
// a git repository read at a revision with go-git, without touching its
// working tree, index or HEAD, or a plain directory read as it is.
package kernelsrc

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Sentinel errors for the ways a tree can be unusable.
var (
	ErrNotKernel   = errors.New("not a Linux kernel tree")
	ErrUnknownRev  = errors.New("unknown revision")
	ErrNotAGitRepo = errors.New("not a git repository")
)

// Tree is a kernel source tree at a base.
type Tree struct {
	Dir    string          // the directory given
	Base   string          // the revision asked for (a label for a plain directory)
	Commit plumbing.Hash   // the base commit, zero for a plain directory
	Repo   *git.Repository // nil for a plain directory
	tree   *object.Tree
	// mu serializes reads of the git objects: go-git's trees cache their
	// entries lazily and its packfile reader is not safe for concurrent use.
	mu sync.Mutex
}

// kernelMarkers are files every kernel tree has.
var kernelMarkers = []string{"MAINTAINERS", "Kconfig", "kernel/fork.c", "arch/x86/Kconfig"}

// OpenGit opens dir as a git repository and resolves base (a tag, branch or
// commit). It reads objects only.
func OpenGit(dir, base string) (*Tree, error) {
	repo, err := openRepo(dir)
	if err != nil {
		return nil, err
	}
	h, err := repo.ResolveRevision(plumbing.Revision(base))
	if err != nil {
		return nil, fmt.Errorf("%q in %s: %w: give a tag, branch or commit of that repository with --base", base, dir, ErrUnknownRev)
	}
	c, err := repo.CommitObject(*h)
	if err != nil {
		return nil, fmt.Errorf("%q in %s: %w: %v", base, dir, ErrUnknownRev, err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	tr := &Tree{Dir: dir, Base: base, Commit: *h, Repo: repo, tree: t}
	return tr, tr.checkKernel()
}

// openRepo opens the repository in dir with its object alternates (clones
// made with --shared or --reference, common among kernel developers) and a
// .git file pointing elsewhere (worktrees) resolved.
func openRepo(dir string) (*git.Repository, error) {
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
		return nil, fmt.Errorf("%s: %w", dir, ErrNotAGitRepo)
	}
	var dotgitFS billy.Filesystem = osfs.New(gitDir)
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		// A worktree's git directory holds HEAD and the index; objects and
		// refs live in the common directory it names.
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		dotgitFS = dotgit.NewRepositoryFilesystem(dotgitFS, osfs.New(common))
	}
	st := filesystem.NewStorageWithOptions(dotgitFS, cache.NewObjectLRUDefault(),
		filesystem.Options{AlternatesFS: osfs.New("/", osfs.WithBoundOS())})
	var wt billy.Filesystem
	if gitDir != dir {
		wt = osfs.New(dir)
	}
	repo, err := git.Open(st, wt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", dir, ErrNotAGitRepo, err)
	}
	return repo, nil
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
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
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
		if !t.Exists(m) {
			what := t.Dir
			if t.Repo != nil {
				what += " at " + t.Base
			}
			return fmt.Errorf("%s: %w (no %s): run kpatch in a kernel tree or give one with --tree", what, ErrNotKernel, m)
		}
	}
	return nil
}

// IsGit reports whether the tree is read from git objects.
func (t *Tree) IsGit() bool { return t.Repo != nil }

// ReadFile returns a file of the tree at the base; a missing file is an
// error matching fs.ErrNotExist.
func (t *Tree) ReadFile(path string) ([]byte, error) {
	if t.tree == nil {
		return os.ReadFile(filepath.Join(t.Dir, filepath.FromSlash(path)))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := t.tree.File(path)
	if err != nil {
		if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
			return nil, fmt.Errorf("%s at %s: %w", path, t.Base, fs.ErrNotExist)
		}
		return nil, err
	}
	r, err := f.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Exists reports whether path exists in the tree at the base.
func (t *Tree) Exists(path string) bool {
	if t.tree == nil {
		_, err := os.Stat(filepath.Join(t.Dir, filepath.FromSlash(path)))
		return err == nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := t.tree.FindEntry(path)
	return err == nil
}

// Mode returns the git mode of the file at path ("100644", "100755"), and
// "100644" for a plain directory's regular files or a missing file.
func (t *Tree) Mode(path string) string {
	if t.tree == nil {
		if st, err := os.Stat(filepath.Join(t.Dir, filepath.FromSlash(path))); err == nil && st.Mode()&0o111 != 0 {
			return "100755"
		}
		return "100644"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, err := t.tree.FindEntry(path); err == nil {
		return fmt.Sprintf("%06o", uint32(e.Mode))
	}
	return "100644"
}

// Entries returns the entries of directory path ("" for the top) of the
// base tree in git's order, or nil for a directory the base lacks or a
// plain directory.
func (t *Tree) Entries(path string) ([]object.TreeEntry, error) {
	if t.tree == nil {
		return nil, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if path == "" {
		return append([]object.TreeEntry(nil), t.tree.Entries...), nil
	}
	sub, err := t.tree.Tree(path)
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return append([]object.TreeEntry(nil), sub.Entries...), nil
}

// IsDir reports whether path is a directory of the tree at the base.
func (t *Tree) IsDir(path string) bool {
	if t.tree == nil {
		st, err := os.Stat(filepath.Join(t.Dir, filepath.FromSlash(path)))
		return err == nil && st.IsDir()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := t.tree.Tree(path)
	return err == nil
}
