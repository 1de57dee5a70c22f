package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"kpatch/plumbing/rangediff"
	"kpatch/spec"
)

// noRevision is the error for a revision the series description lacks,
// naming those it has.
func noRevision(sp *spec.Spec) error {
	var have []string
	for _, r := range sp.Revisions {
		have = append(have, "v"+strconv.Itoa(r.Version))
	}
	return fmt.Errorf("%w (it has %s)", spec.ErrNoRevision, strings.Join(have, ", "))
}

// treeMailmap reads the .mailmap at the top of tree, as git range-diff
// run there would use it; nil when there is none.
func treeMailmap(tree string) *rangediff.Mailmap {
	data, err := os.ReadFile(filepath.Join(tree, ".mailmap"))
	if err != nil {
		return nil
	}
	return rangediff.ParseMailmap(data)
}
