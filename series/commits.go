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
			if f.Created {
				if err := tb.checkCreate(f.Path); err != nil {
					return last, fmt.Errorf("patch %d (%s) creates %s, but %w", p.Number, p.ID, f.Path, err)
				}
			}
			if err := tb.set(f.Path, f.New); err != nil {
				return last, fmt.Errorf("patch %d (%s): %s: %w", p.Number, p.ID, f.Path, err)
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

// ErrPathCollision is returned when a file the series creates collides
// with the base tree: a directory it needs is a file there, or the file
// itself is a directory.
var ErrPathCollision = errors.New("path collides with the base tree")

// checkCreate refuses to create path where the base tree has a file (or a
// symbolic link or submodule) in place of one of its directories, or a
// directory in its place; a commit would otherwise silently replace it.
func (tb *treeBuilder) checkCreate(path string) error {
	what, fix := "--base "+tb.base.Base, "remove or rename it in the base, or choose another --base"
	if !tb.base.IsGit() {
		what, fix = tb.base.Dir, "remove or rename it there, or give another --tree"
	}
	inTheWay := func(p string) error {
		if p != path {
			return fmt.Errorf("%s is a file in %s where the series needs a directory (%w): %s", p, what, ErrPathCollision, fix)
		}
		return fmt.Errorf("it is a directory in %s (%w): %s", what, ErrPathCollision, fix)
	}
	if !tb.base.IsGit() {
		for i := 0; i <= len(path); i++ {
			if i < len(path) && path[i] != '/' {
				continue
			}
			p := path[:i]
			if isDir := tb.base.IsDir(p); tb.base.Exists(p) && isDir == (p == path) {
				return inTheWay(p)
			}
		}
		return nil
	}
	// A git base: walk the directories as the series has left them so far
	// (loaded once from the base tree, as set does).
	dirPath := ""
	parts := strings.Split(path, "/")
	for i, name := range parts {
		d, err := tb.dir(dirPath)
		if err != nil {
			return err
		}
		j := d.find(name)
		if j < 0 {
			return nil
		}
		if isDir := d.entries[j].Mode == filemode.Dir; isDir == (i == len(parts)-1) {
			return inTheWay(dirPath + name)
		}
		dirPath += name + "/"
	}
	return nil
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

// ErrBadBranchName is returned for a branch name git would refuse.
var ErrBadBranchName = errors.New("not a valid branch name")

// CheckBranchName applies the rules of git check-ref-format --branch to a
// new branch's name: those of refs/heads/NAME as a ref name (no component
// empty, starting with "." or ending with ".lock"; no "..", "@{", control
// characters, space, ~ ^ : ? * [ or backslash; not ending with ".") and
// those of a branch (not "HEAD", not starting with "-"). The error names the
// rule that was broken.
func CheckBranchName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("--branch %q: %w (%s): choose a name git check-ref-format --branch accepts", name, ErrBadBranchName, why)
	}
	switch {
	case name == "":
		return bad("it is empty")
	case name == "HEAD":
		return bad("HEAD names the checked-out commit")
	case strings.HasPrefix(name, "-"):
		return bad("it starts with -")
	case strings.HasSuffix(name, "."):
		return bad("it ends with .")
	case strings.Contains(name, ".."):
		return bad(`it contains ".."`)
	case strings.Contains(name, "@{"):
		return bad(`it contains "@{"`)
	}
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f:
			return bad(fmt.Sprintf("it contains the control character %U", r))
		case strings.ContainsRune(" ~^:?*[\\", r):
			return bad(fmt.Sprintf("it contains %q", r))
		}
	}
	for _, c := range strings.Split(name, "/") {
		switch {
		case c == "":
			return bad("it has an empty component: a leading, trailing or double /")
		case strings.HasPrefix(c, "."):
			return bad(fmt.Sprintf("the component %q starts with .", c))
		case strings.HasSuffix(c, ".lock"):
			return bad(fmt.Sprintf("the component %q ends with .lock", c))
		}
	}
	return nil
}

// CheckBranch reports whether CreateBranch(name) can succeed: the tree is a
// git repository, the name is valid (CheckBranchName), no branch of that
// name exists, and none that git could not keep beside it (a/b beside a).
// It changes nothing, so a caller checks before writing any output.
func (s *Series) CheckBranch(name string) error {
	if err := CheckBranchName(name); err != nil {
		return err
	}
	if !s.Tree.IsGit() {
		return fmt.Errorf("--branch %s: %s is read as a plain directory, not a git repository: drop --branch (or --plain)", name, s.Tree.Dir)
	}
	ref := plumbing.NewBranchReferenceName(name)
	if _, err := s.Tree.Repo.Reference(ref, false); err == nil {
		return fmt.Errorf("--branch %s: %w: choose another name or delete it with git branch -D", name, ErrBranchExists)
	}
	refs, err := s.Tree.Repo.References()
	if err != nil {
		return fmt.Errorf("--branch %s: reading the refs of %s: %w", name, s.Tree.Dir, err)
	}
	defer refs.Close()
	full := ref.String()
	return refs.ForEach(func(r *plumbing.Reference) error {
		other := r.Name().String()
		if strings.HasPrefix(full, other+"/") || strings.HasPrefix(other, full+"/") {
			return fmt.Errorf("--branch %s: %s exists, and git cannot keep both %s and %s: choose another name", name, other, other, full)
		}
		return nil
	})
}

// CreateBranch records one commit per patch on a new branch of the tree's
// repository. It writes objects and the branch ref only: the working tree,
// the index and HEAD are left alone. An existing branch, an invalid name or
// a name that conflicts with an existing ref is refused (see CheckBranch).
func (s *Series) CreateBranch(name string) error {
	if err := s.CheckBranch(name); err != nil {
		return err
	}
	tip, err := s.writeCommits(s.Tree.Repo.Storer)
	if err != nil {
		return err
	}
	return s.Tree.Repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(name), tip))
}

// TipTree returns the hash of the tree after the last patch.
func (s *Series) TipTree() string { return s.tipTree }
