package kernelsrc

import (
	"fmt"
	"strings"
)

// BranchConflict returns the name of an existing reference that git could
// not keep beside the new branch name (refs/heads/a beside refs/heads/a/b,
// either way round), or "" when there is none. Loose and packed
// references both count.
func (t *Tree) BranchConflict(name string) (string, error) {
	if t.db == nil {
		return "", fmt.Errorf("%s: %w", t.Dir, ErrNotAGitRepo)
	}
	names, err := t.db.RefNames()
	if err != nil {
		return "", damaged(t.Dir, err)
	}
	full := "refs/heads/" + name
	for _, other := range names {
		if strings.HasPrefix(full, other+"/") || strings.HasPrefix(other, full+"/") {
			return other, nil
		}
	}
	return "", nil
}
