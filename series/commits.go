package series

import (
	"errors"
	"fmt"
	"net/mail"
	"sort"
	"strconv"
	"strings"
	"time"

	"kpatch/plumbing/kernelsrc"
)

// ErrBranchExists is returned by CreateBranch for a branch that exists.
var ErrBranchExists = errors.New("branch already exists")

// objectSink receives the objects of the series' commits and returns
// their ids: commits only computes them, a tree's WriteObject stores them
// in its repository.
type objectSink func(t kernelsrc.ObjectType, content []byte) (kernelsrc.Hash, error)

// commits computes the commit of every patch, as CreateBranch would record
// it, in memory. For a plain directory the trees hold only the files the
// series touches (there is no base tree to start from).
func (s *Series) commits() error {
	_, err := s.writeCommits(func(t kernelsrc.ObjectType, content []byte) (kernelsrc.Hash, error) {
		return kernelsrc.HashObject(t, content), nil
	}, true)
	return err
}

// Commits returns the commit of every patch, in order, as the "From
// <sha>" lines of the mail and --branch give them.
func (s *Series) Commits() ([]string, error) {
	if err := s.prepareMail(); err != nil {
		return nil, err
	}
	out := make([]string, len(s.Patches))
	for i, p := range s.Patches {
		out[i] = p.commit
	}
	return out, nil
}

// writeCommits makes the commit of every patch, handing each object to
// store; inMemory says that store keeps nothing, so the blobs, whose ids
// the file changes know, are not handed over.
func (s *Series) writeCommits(store objectSink, inMemory bool) (kernelsrc.Hash, error) {
	var parent []kernelsrc.Hash
	tb := &treeBuilder{store: store, inMemory: inMemory, base: s.Tree, dirs: map[string]*dirState{}}
	if s.Tree.IsGit() {
		parent = []kernelsrc.Hash{s.Tree.Commit}
	}
	var last kernelsrc.Hash
	// A stacked series' commits sit on its prerequisite's, as git am of
	// both gives them.
	all := append(append([]*Patch{}, s.prerequisites...), s.Patches...)
	for _, p := range all {
		for _, f := range p.Files {
			if f.Created {
				if err := tb.checkCreate(f.Path); err != nil {
					return last, fmt.Errorf("patch %d (%s) creates %s, but %w", p.Number, p.ID, f.Path, err)
				}
			}
			if err := tb.set(f.Path, f.New, f.id); err != nil {
				return last, fmt.Errorf("patch %d (%s): %s: %w", p.Number, p.ID, f.Path, err)
			}
		}
		th, err := tb.flush()
		if err != nil {
			return last, err
		}
		if th == (kernelsrc.Hash{}) {
			// A patch that changes nothing (the base has it): its
			// commit has the tree of its parent.
			if th, err = tb.unchanged(); err != nil {
				return last, err
			}
		}
		var c []byte
		c = append(c, "tree "+th.String()+"\n"...)
		for _, ph := range parent {
			c = append(c, "parent "+ph.String()+"\n"...)
		}
		c = append(c, "author "+signature(p.Author, p.Date)+"\n"...)
		c = append(c, "committer "+signature(s.Revision.From, p.Date)+"\n"...)
		c = append(c, "\n"+p.Subject+"\n\n"+p.Log...)
		last, err = store(kernelsrc.CommitObject, c)
		if err != nil {
			return last, err
		}
		p.commit = last.String()
		s.tipTree = th.String()
		parent = []kernelsrc.Hash{last}
	}
	return last, nil
}

// signature is a commit's author or committer line after its keyword:
// "Name <email> SECONDS ZONE".
func signature(addr string, when time.Time) string {
	name, email := addr, ""
	if a, err := mail.ParseAddress(addr); err == nil {
		name, email = a.Name, a.Address
	}
	u := when.Unix()
	if u < 0 {
		u = 0
	}
	return name + " <" + email + "> " + strconv.FormatInt(u, 10) + " " + when.Format("-0700")
}

// treeBuilder keeps the directories a series touches, starting from the
// base tree, and after each patch writes only the trees that changed: the
// directories of the files the patch changed and their parents.
type treeBuilder struct {
	store    objectSink
	inMemory bool                 // store keeps nothing: blobs are not handed to it
	base     *kernelsrc.Tree      // a plain directory contributes no entries
	dirs     map[string]*dirState // by path, "" for the root, "a/b/" below it
	buf      []byte               // tree encoding buffer, reused
}

type dirState struct {
	entries []kernelsrc.Entry // in git's order (see treeKey)
	dirty   bool
}

// treeKey is what git sorts tree entries by: the name, a directory's
// compared as name + "/".
func treeKey(e kernelsrc.Entry) string {
	if e.IsDir() {
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
func (d *dirState) put(e kernelsrc.Entry) {
	if i := d.find(e.Name); i >= 0 && d.entries[i].Mode == e.Mode {
		d.entries[i] = e
		return
	} else if i >= 0 {
		d.remove(e.Name)
	}
	k := treeKey(e)
	i := sort.Search(len(d.entries), func(i int) bool { return treeKey(d.entries[i]) >= k })
	d.entries = append(d.entries, kernelsrc.Entry{})
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
		if isDir := d.entries[j].IsDir(); isDir == (i == len(parts)-1) {
			return inTheWay(dirPath + name)
		}
		dirPath += name + "/"
	}
	return nil
}

// set records a file's new content (nil removes it), whose blob id is
// id().
func (tb *treeBuilder) set(path string, content []byte, id func() kernelsrc.Hash) error {
	i := strings.LastIndexByte(path, '/')
	dirPath, name := path[:i+1], path[i+1:]
	d, err := tb.dir(dirPath)
	if err != nil {
		return err
	}
	if content == nil {
		d.remove(name)
	} else {
		h := id()
		if !tb.inMemory {
			if _, err := tb.store(kernelsrc.BlobObject, content); err != nil {
				return err
			}
		}
		mode := uint32(0o100644)
		if i := d.find(name); i >= 0 {
			mode = d.entries[i].Mode
		}
		d.put(kernelsrc.Entry{Name: name, Mode: mode, Hash: h})
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
func (tb *treeBuilder) flush() (kernelsrc.Hash, error) {
	var dirty []string
	for p, d := range tb.dirs {
		if d.dirty {
			dirty = append(dirty, p)
		}
	}
	sort.Slice(dirty, func(i, j int) bool { return strings.Count(dirty[i], "/") > strings.Count(dirty[j], "/") })
	var root kernelsrc.Hash
	for _, p := range dirty {
		d := tb.dirs[p]
		tb.buf = encodeTree(tb.buf[:0], d.entries)
		h, err := tb.store(kernelsrc.TreeObject, tb.buf)
		if err != nil {
			return kernelsrc.Hash{}, err
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
			return kernelsrc.Hash{}, err
		}
		parent.put(kernelsrc.Entry{Name: trimmed[j+1:], Mode: 0o40000, Hash: h})
	}
	return root, nil
}

// unchanged returns the root tree as it stands, written again: the tree
// of a commit that changes nothing.
func (tb *treeBuilder) unchanged() (kernelsrc.Hash, error) {
	d, err := tb.dir("")
	if err != nil {
		return kernelsrc.Hash{}, err
	}
	d.dirty = true
	return tb.flush()
}

// encodeTree appends a tree object's content to b: "MODE NAME\0" and the
// binary id of each entry, entries in git's order.
func encodeTree(b []byte, entries []kernelsrc.Entry) []byte {
	for _, e := range entries {
		b = strconv.AppendUint(b, uint64(e.Mode), 8)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.Hash[:]...)
	}
	return b
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
		return fmt.Errorf("--branch %s: %s is read as a plain directory, %w: drop --branch (or --plain)", name, s.Tree.Dir, kernelsrc.ErrNotAGitRepo)
	}
	if ok, err := s.Tree.HasBranch(name); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("--branch %s: %w: choose another name or delete it with git branch -D", name, ErrBranchExists)
	}
	other, err := s.Tree.BranchConflict(name)
	if err != nil {
		return fmt.Errorf("--branch %s: %w", name, err)
	}
	if other != "" {
		return fmt.Errorf("--branch %s: %s exists, and git cannot keep both %s and refs/heads/%s (%w): choose another name", name, other, other, name, ErrBadBranchName)
	}
	return nil
}

// CreateBranch records one commit per patch on a new branch of the tree's
// repository. It writes objects and the branch ref only: the working tree,
// the index and HEAD are left alone. An existing branch, an invalid name or
// a name that conflicts with an existing ref is refused (see CheckBranch).
func (s *Series) CreateBranch(name string) error {
	if err := s.CheckBranch(name); err != nil {
		return err
	}
	tip, err := s.writeCommits(s.Tree.WriteObject, false)
	if err != nil {
		return err
	}
	if err := s.Tree.CreateBranch(name, tip); errors.Is(err, kernelsrc.ErrBranchExists) {
		return fmt.Errorf("--branch %s: %w: choose another name or delete it with git branch -D", name, ErrBranchExists)
	} else if err != nil {
		return fmt.Errorf("--branch %s: %w", name, err)
	}
	return nil
}

// TipTree returns the hash of the tree after the last patch.
func (s *Series) TipTree() (string, error) {
	if err := s.prepareMail(); err != nil {
		return "", err
	}
	return s.tipTree, nil
}
