package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"kpatch/plumbing/kernelsrc"
)

// enclosingKernelTree returns the kernel tree dir is in (dir or one of
// its parents with a kernel's MAINTAINERS, Kconfig and kernel/fork.c),
// or "": as git finds the repository a command runs in.
func enclosingKernelTree(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		ok := true
		for _, m := range []string{"MAINTAINERS", "Kconfig", "kernel/fork.c"} {
			if _, err := os.Stat(filepath.Join(d, m)); err != nil {
				ok = false
				break
			}
		}
		if ok {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// baseCommitRE is the base-commit: line git format-patch --base and b4
// write below a cover letter's or a patch's diff.
var baseCommitRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^base-commit: ([0-9a-f]{7,40})\s*$`) })

// mailBaseCommit returns the base-commit: the series at path names (an
// mbox, a directory of mails, a saved thread), or "".
func mailBaseCommit(path string) string {
	files := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		ents, _ := os.ReadDir(path)
		files = files[:0]
		for _, e := range ents {
			if !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if m := baseCommitRE().FindSubmatch(data); m != nil {
			return string(m[1])
		}
	}
	return ""
}

// treeTags returns up to n tags of the git repository at dir, the
// newest first, for a refusal to name what the tree has.
func treeTags(dir string, n int) []string {
	out, err := exec.Command("git", "-C", dir, "tag", "--list", "--sort=-creatordate").Output()
	if err != nil {
		return nil
	}
	tags := strings.Fields(string(out))
	if len(tags) > n {
		tags = tags[:n]
	}
	return tags
}

// openMailTree opens the tree a posted series is applied to: tree (""
// for the kernel tree the working directory is in) at base, else at the
// mail's base-commit:, else at its HEAD, as git am applies to HEAD. It
// returns "" and no error when there is no tree to read.
func openMailTree(open func(dir, base string) error, file, tree, base string, plain bool, progress io.Writer) (string, error) {
	if tree == "" {
		if tree = enclosingKernelTree("."); tree == "" {
			if base != "" {
				return "", fmt.Errorf("--base %s names a revision of the kernel tree: give the tree with --tree, or run verify inside it", base)
			}
			return "", nil
		}
		fmt.Fprintf(progress, "kpatch verify: applying the series to the kernel tree %s (the working directory's; --tree to give another)\n", tree)
	}
	fromMail := ""
	if base == "" && !plain {
		if fromMail = mailBaseCommit(file); fromMail != "" {
			base = fromMail
		} else {
			base = "HEAD"
		}
	}
	err := open(tree, base)
	if err != nil && fromMail != "" && errors.Is(err, kernelsrc.ErrUnknownRev) {
		has := "no tags"
		if tags := treeTags(tree, 8); len(tags) > 0 {
			has = "tags " + strings.Join(tags, ", ")
		}
		return "", fmt.Errorf("the series' base-commit %s is not in %s (it has %s): give the base it applies to with --base, or fetch that commit", fromMail, tree, has)
	}
	return tree, err
}

// readStdin copies r (the series given as "-") to a file of a new
// temporary directory and returns its path and the directory to remove.
func readStdin(r io.Reader) (path, dir string, err error) {
	if r == nil {
		r = os.Stdin
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return "", "", fmt.Errorf("reading the series from standard input: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return "", "", errors.New("standard input is empty: give the series (an mbox) on it, or a file")
	}
	dir, err = os.MkdirTemp("", "kpatch-verify-stdin-")
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, "stdin")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return path, dir, nil
}

// slowPhase prints msg on w if the phase it starts is still running
// after a few seconds (the first run with build trees preprocesses every
// C file); stop ends it.
func slowPhase(w io.Writer, msg string) (stop func()) {
	t := time.AfterFunc(3*time.Second, func() { fmt.Fprintln(w, msg) })
	return func() { t.Stop() }
}
