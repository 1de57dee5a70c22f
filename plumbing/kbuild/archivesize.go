package kbuild

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
)

// archiveSize estimates the size of git archive --format=tar of commit:
// each file's content rounded up to tar's 512-byte blocks and a header
// block for it. 0 when git cannot say (the progress then has no total).
func archiveSize(ctx context.Context, tree, commit string) int64 {
	out, err := exec.CommandContext(ctx, "git", "-C", tree, "ls-tree", "-r", "-l", commit).Output()
	if err != nil {
		return 0
	}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "100644 blob <hash>    1234\tpath"
		meta, _, _ := strings.Cut(sc.Text(), "\t")
		f := strings.Fields(meta)
		if len(f) != 4 {
			continue
		}
		n, _ := strconv.ParseInt(f[3], 10, 64)
		total += 512 + (n+511)/512*512
	}
	return total
}

// short abbreviates a commit hash for messages.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
