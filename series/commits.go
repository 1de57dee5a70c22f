package series

import (
	"errors"
	"fmt"
	"net/mail"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"
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
	var base *object.Tree
	var parent []plumbing.Hash
	if s.Tree.IsGit() {
		base = s.Tree.GitTree()
		parent = []plumbing.Hash{s.Tree.Commit}
	}
	changed := map[string][]byte{}
	tb := &treeBuilder{store: store, subtrees: map[string]*object.Tree{}, blobs: map[string]plumbing.Hash{}}
	var last plumbing.Hash
	for _, p := range s.Patches {
		for _, f := range p.Files {
			changed[f.Path] = f.New
		}
		th, err := tb.build(base, "", changed)
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

// treeBuilder writes trees, remembering the base's subtrees it decoded and
// the blobs it wrote, since every patch rebuilds the same few directories.
type treeBuilder struct {
	store    storer.EncodedObjectStorer
	subtrees map[string]*object.Tree // by directory path
	blobs    map[string]plumbing.Hash
}

// build writes the tree of base (the directory dir of the base tree) with
// the files in changed replaced (paths relative to dir; nil content removes
// a file) and returns its hash.
func (tb *treeBuilder) build(base *object.Tree, dir string, changed map[string][]byte) (plumbing.Hash, error) {
	store := tb.store
	sub := map[string]map[string][]byte{}
	files := map[string][]byte{}
	for p, c := range changed {
		if dir, rest, ok := strings.Cut(p, "/"); ok {
			if sub[dir] == nil {
				sub[dir] = map[string][]byte{}
			}
			sub[dir][rest] = c
		} else {
			files[p] = c
		}
	}
	entries := map[string]object.TreeEntry{}
	if base != nil {
		for _, e := range base.Entries {
			entries[e.Name] = e
		}
	}
	for name, c := range files {
		if c == nil {
			delete(entries, name)
			continue
		}
		h, ok := tb.blobs[string(c)]
		if !ok {
			obj := store.NewEncodedObject()
			obj.SetType(plumbing.BlobObject)
			w, err := obj.Writer()
			if err != nil {
				return plumbing.ZeroHash, err
			}
			w.Write(c)
			w.Close()
			if h, err = store.SetEncodedObject(obj); err != nil {
				return plumbing.ZeroHash, err
			}
			tb.blobs[string(c)] = h
		}
		mode := filemode.Regular
		if e, ok := entries[name]; ok {
			mode = e.Mode
		}
		entries[name] = object.TreeEntry{Name: name, Mode: mode, Hash: h}
	}
	for name, ch := range sub {
		path := dir + name + "/"
		subBase, ok := tb.subtrees[path]
		if !ok && base != nil {
			if t, err := base.Tree(name); err == nil {
				subBase = t
			}
			tb.subtrees[path] = subBase
		}
		h, err := tb.build(subBase, path, ch)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
	}
	t := &object.Tree{}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	// git sorts tree entries by name, comparing a directory as name + "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	obj := store.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return store.SetEncodedObject(obj)
}

// CreateBranch records one commit per patch on a new branch of the tree's
// repository. It writes objects and the branch ref only: the working tree,
// the index and HEAD are left alone. An existing branch is refused.
func (s *Series) CreateBranch(name string) error {
	if !s.Tree.IsGit() {
		return fmt.Errorf("--branch %s: %s is not a git repository", name, s.Tree.Dir)
	}
	ref := plumbing.NewBranchReferenceName(name)
	if _, err := s.Tree.Repo.Reference(ref, false); err == nil {
		return fmt.Errorf("--branch %s: %w: choose another name or delete it with git branch -D", name, ErrBranchExists)
	}
	tip, err := s.writeCommits(s.Tree.Repo.Storer)
	if err != nil {
		return err
	}
	return s.Tree.Repo.Storer.SetReference(plumbing.NewHashReference(ref, tip))
}

// TipTree returns the hash of the tree after the last patch.
func (s *Series) TipTree() string { return s.tipTree }
