package gitapply

import "strings"

// DirTree is a Tree that also knows its directories. Given one, Apply
// says as git does that a file cannot be written where a directory of
// files is; with a plain Tree it cannot know.
type DirTree interface {
	Tree
	// Under returns the paths of the files under directory dir (none
	// when dir is not a directory of the tree).
	Under(dir string) []string
}

// writer is the tree as git's write_out_results meets it while it writes
// the files of a patch: the removals done first (every old name but a
// creation's and a copy's), then the files written so far.
type writer struct {
	tree    Tree
	removed map[string]bool
	written map[string]bool
}

func (a *applier) newWriter(list []*filePatch) *writer {
	w := &writer{tree: a.tree, removed: map[string]bool{}, written: map[string]bool{}}
	for _, p := range list {
		if !p.rejected && p.isNew <= 0 && !p.isCopy && p.oldName != "" {
			w.removed[p.oldName] = true
		}
	}
	return w
}

// isFile reports whether path is a file when the writing gets to it.
func (w *writer) isFile(path string) bool {
	return w.written[path] || (w.tree.Mode(path) != 0 && !w.removed[path])
}

// create writes path, returning why git's create_one_file cannot, in the
// words of strerror: "Not a directory" when a directory on its way is a
// file, "Directory not empty" when path is a directory that still holds
// files (git removes a directory the removals emptied, and writes the
// file in its place).
func (w *writer) create(path string) string {
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && w.isFile(path[:i]) {
			return "Not a directory"
		}
	}
	prefix := path + "/"
	for p := range w.written {
		if strings.HasPrefix(p, prefix) {
			return "Directory not empty"
		}
	}
	if d, ok := w.tree.(DirTree); ok {
		for _, p := range d.Under(path) {
			if !w.removed[p] {
				return "Directory not empty"
			}
		}
	}
	w.written[path] = true
	return ""
}
