package series

import (
	"fmt"
	"os"

	"kpatch/plumbing/kernelsrc"
	"kpatch/plumbing/outdir"
	"kpatch/spec"
	"kpatch/templates/linux"
)

// Selection is the series a command works on, as its flags name it: the
// series description, loaded once; the revision, of the main series or of
// a series stacked on it (laid on the revision of the main one it names);
// and the kernel tree at the base the revision is laid on. cmd/kpatch makes
// it once from the shared flags, and every stage takes it or the series
// Generate makes of it.
type Selection struct {
	Spec     *spec.Spec
	Revision *spec.Revision
	Tree     *kernelsrc.Tree // nil until OpenTree, and for commands that read no tree
}

// Select loads the series description in specDir ("" for the one built
// in) and selects revision v of the main series (0: the newest) or, with
// stack, revision v of the series stacked under that name, laid on
// revision on of the main one (0: the one it was posted on). Nothing is
// generated and no tree is opened.
func Select(specDir string, v int, stack string, on int) (*Selection, error) {
	sp, err := LoadSpec(specDir)
	if err != nil {
		return nil, err
	}
	rev, err := sp.Select(v, stack, on)
	if err != nil {
		return nil, err
	}
	return &Selection{Spec: sp, Revision: rev}, nil
}

// LoadSpec loads the embedded series description, or the one in dir.
func LoadSpec(dir string) (*spec.Spec, error) {
	if dir == "" {
		return spec.Load(linux.FS)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--spec %s: %w", dir, outdir.ErrNotDir)
	}
	return spec.Load(os.DirFS(dir))
}

// OpenTree opens the kernel tree in dir ("" for the working directory) at
// base ("" for the base the revision records) as the selection's tree: a
// git repository read from its objects, or with plain a plain directory.
func (sel *Selection) OpenTree(dir, base string, plain bool) error {
	if dir == "" {
		dir = "."
	}
	if base == "" {
		base = sel.Revision.Base
	}
	t, err := kernelsrc.Open(dir, base, plain)
	if err != nil {
		return err
	}
	sel.Tree = t
	return nil
}

// WithVersion returns the selection of revision v of the same series (the
// main one, or the same stacked series laid on the same revision of the
// main one) on the same tree: the earlier revision that a range-diff or
// an interdiff compares the selected one with.
func (sel *Selection) WithVersion(v int) (*Selection, error) {
	r := sel.Revision
	on := 0
	if r.Moved() {
		on = r.Prerequisite.Version
	}
	rev, err := sel.Spec.Select(v, r.Series, on)
	if err != nil {
		return nil, err
	}
	return &Selection{Spec: sel.Spec, Revision: rev, Tree: sel.Tree}, nil
}
