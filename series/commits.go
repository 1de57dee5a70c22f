package series

import (
	"errors"
	"fmt"
	"net/mail"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"

	"kpatch/kernelsrc"
)

// ErrBranchExists is returned by CreateBranch for a branch that exists.
var ErrBranchExists = errors.New("branch already exists")

// commits computes the commit of every patch, as CreateBranch would record
// it, in memory. For a plain directory the trees hold only the files the
// series touches (there is no base tree to start from).
func (s *Series) commits() error {
	_, err := s.writeCommits(memory.NewStorage())
	return err
}

func (s *Series) writeCommits(store storer.EncodedObjectStorer) (plumbing.Hash, error) {
	var parent []plumbing.Hash
	tb := &treeBuilder{store: store, base: s.Tree, dirs: map[string]*dirState{}}
	if s.Tree.IsGit() {
		parent = []plumbing.Hash{s.Tree.Commit}
	}
	var last plumbing.Hash
	for _, p := range s.Patches {
		for _, f := range p.Files {
			if err := tb.set(f.Path, f.New); err != nil {
				return last, err
			}
		}
		th, err := tb.flush()
		if err != nil {
			return last, err
		}
		c := &object.Commit{
			Author:       signature(p.Author, p.Date),
			Committer:    signature(s.Revision.From, p.Date),
			Message:      p.Subject + "\n\n" + p.Log,
			TreeHash:     th,
			ParentHashes: parent,
		}
		obj := store.NewEncodedObject()
		if err := c.Encode(obj); err != nil {
			return last, err
		}
		last, err = store.SetEncodedObject(obj)
		if err != nil {
			return last, err
		}
		p.Commit = last.String()
		s.tipTree = th.String()
		parent = []plumbing.Hash{last}
	}
	return last, nil
}

func signature(addr string, when time.Time) object.Signature {
	a, err := mail.ParseAddress(addr)
	if err != nil {
		return object.Signature{Name: addr, When: when}
	}
	return object.Signature{Name: a.Name, Email: a.Address, When: when}
}

// treeBuilder keeps the directories a series touches, starting from the
// base tree, and after each patch writes only the trees that changed: the
// directories of the files the patch changed and their parents.
type treeBuilder struct {
	store storer.EncodedObjectStorer
	base  *kernelsrc.Tree      // a plain directory contributes no entries
	dirs  map[string]*dirState // by path, "" for the root, "a/b/" below it
}

type dirState struct {
	entries []object.TreeEntry // in git's order (see treeKey)
	dirty   bool
}

// treeKey is what git sorts tree entries by: the name, a directory's
// compared as name + "/".
func treeKey(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// find returns the index of the entry named name, or -1.
func (d *dirState) find(name string) int {
	for _, k := range []string{name, name + "/"} {
		i := sort.Search(len(d.entries), func(i int) bool { return treeKey(d.entries[i]) >= k })
		if i < len(d.entries) && d.entries[i].Name == name {
			return i
		}
	}
	return -1
}

// put adds or replaces an entry, keeping the order.
func (d *dirState) put(e object.TreeEntry) {
	if i := d.find(e.Name); i >= 0 && d.entries[i].Mode == e.Mode {
		d.entries[i] = e
		return
	} else if i >= 0 {
		d.remove(e.Name)
	}
	k := treeKey(e)
	i := sort.Search(len(d.entries), func(i int) bool { return treeKey(d.entries[i]) >= k })
	d.entries = append(d.entries, object.TreeEntry{})
	copy(d.entries[i+1:], d.entries[i:])
	d.entries[i] = e
}

func (d *dirState) remove(name string) {
	if i := d.find(name); i >= 0 {
		d.entries = append(d.entries[:i], d.entries[i+1:]...)
	}
}

// dir returns the state of directory path ("" or "a/b/"), loading it from
// the base tree on first use.
func (tb *treeBuilder) dir(path string) (*dirState, error) {
	if d, ok := tb.dirs[path]; ok {
		return d, nil
	}
	entries, err := tb.base.Entries(strings.TrimSuffix(path, "/"))
	if err != nil {
		return nil, err
	}
	d := &dirState{entries: entries} // git's order already
	tb.dirs[path] = d
	return d, nil
}

// set records a file's new content (nil removes it).
func (tb *treeBuilder) set(path string, content []byte) error {
	i := strings.LastIndexByte(path, '/')
	dirPath, name := path[:i+1], path[i+1:]
	d, err := tb.dir(dirPath)
	if err != nil {
		return err
	}
	if content == nil {
		d.remove(name)
	} else {
		obj := tb.store.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return err
		}
		w.Write(content)
		w.Close()
		h, err := tb.store.SetEncodedObject(obj)
		if err != nil {
			return err
		}
		mode := filemode.Regular
		if i := d.find(name); i >= 0 {
			mode = d.entries[i].Mode
		}
		d.put(object.TreeEntry{Name: name, Mode: mode, Hash: h})
	}
	// Mark the directory and its parents for rewriting.
	for p := dirPath; ; {
		pd, err := tb.dir(p)
		if err != nil {
			return err
		}
		pd.dirty = true
		if p == "" {
			return nil
		}
		j := strings.LastIndexByte(strings.TrimSuffix(p, "/"), '/')
		p = p[:j+1]
	}
}

// flush writes the dirty trees, deepest first, and returns the root's hash.
func (tb *treeBuilder) flush() (plumbing.Hash, error) {
	var dirty []string
	for p, d := range tb.dirs {
		if d.dirty {
			dirty = append(dirty, p)
		}
	}
	sort.Slice(dirty, func(i, j int) bool { return strings.Count(dirty[i], "/") > strings.Count(dirty[j], "/") })
	var root plumbing.Hash
	for _, p := range dirty {
		d := tb.dirs[p]
		obj := tb.store.NewEncodedObject()
		if err := encodeTree(obj, d.entries); err != nil {
			return plumbing.ZeroHash, err
		}
		h, err := tb.store.SetEncodedObject(obj)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		d.dirty = false
		if p == "" {
			root = h
			continue
		}
		trimmed := strings.TrimSuffix(p, "/")
		j := strings.LastIndexByte(trimmed, '/')
		parent, err := tb.dir(trimmed[:j+1])
		if err != nil {
			return plumbing.ZeroHash, err
		}
		parent.put(object.TreeEntry{Name: trimmed[j+1:], Mode: filemode.Dir, Hash: h})
	}
	return root, nil
}

// encodeTree writes a tree object: "MODE NAME\0" and the binary hash of
// each entry, entries in git's order.
func encodeTree(obj plumbing.EncodedObject, entries []object.TreeEntry) error {
	obj.SetType(plumbing.TreeObject)
	var b []byte
	for _, e := range entries {
		b = strconv.AppendUint(b, uint64(e.Mode), 8)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.Hash[:]...)
	}
	w, err := obj.Writer()
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.Close()
}

// CreateBranch records one commit per patch on a new branch of the tree's
// repository. It writes objects and the branch ref only: the working tree,
// the index and HEAD are left alone. An existing branch is refused.
func (s *Series) CreateBranch(name string) error {
	if !s.Tree.IsGit() {
		return fmt.Errorf("--branch %s: %s is not a git repository", name, s.Tree.Dir)
	}
	repo, err := s.Tree.Repository()
	if err != nil {
		return err
	}
	ref := plumbing.NewBranchReferenceName(name)
	if _, err := repo.Reference(ref, false); err == nil {
		return fmt.Errorf("--branch %s: %w: choose another name or delete it with git branch -D", name, ErrBranchExists)
	}
	tip, err := s.writeCommits(repo.Storer)
	if err != nil {
		return err
	}
	return repo.Storer.SetReference(plumbing.NewHashReference(ref, tip))
}

// TipTree returns the hash of the tree after the last patch.
func (s *Series) TipTree() string { return s.tipTree }
