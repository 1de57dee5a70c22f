package kernelsrc

import (
	"fmt"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// BranchConflict returns the name of an existing reference that git could
// not keep beside the new branch name (refs/heads/a beside refs/heads/a/b,
// either way round), or "" when there is none. It lists the repository's
// loose and packed references with go-git, which kpatch uses for the
// repository-wide operations; reading objects at a revision stays with the
// faster internal reader.
func (t *Tree) BranchConflict(name string) (string, error) {
	if t.db == nil {
		return "", fmt.Errorf("%s: %w", t.Dir, ErrNotAGitRepo)
	}
	repo, err := git.PlainOpenWithOptions(t.Dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return "", fmt.Errorf("opening %s with go-git: %w", t.Dir, err)
	}
	refs, err := repo.References()
	if err != nil {
		return "", fmt.Errorf("reading the refs of %s: %w", t.Dir, err)
	}
	defer refs.Close()
	full := plumbing.NewBranchReferenceName(name).String()
	conflict := ""
	err = refs.ForEach(func(r *plumbing.Reference) error {
		other := r.Name().String()
		if strings.HasPrefix(full, other+"/") || strings.HasPrefix(other, full+"/") {
			conflict = other
			return errStopRefs
		}
		return nil
	})
	if err != nil && err != errStopRefs {
		return "", fmt.Errorf("reading the refs of %s: %w", t.Dir, err)
	}
	return conflict, nil
}

// errStopRefs ends a walk of the references early.
var errStopRefs = fmt.Errorf("stop")
