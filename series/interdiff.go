package series

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"kpatch/plumbing/kernelsrc"
	"kpatch/plumbing/linediff"
)

// TreeDiff returns what git diff prints between two trees that differ at
// most in the given paths: old and new map a path to its content (nil or
// absent: the file does not exist on that side); mode gives the mode of a
// file ("100644" when it returns ""). Files come in git's path order; a file
// present on one side only is a creation or a deletion.
func TreeDiff(old, new map[string][]byte, mode func(path string) string) string {
	paths := map[string]bool{}
	for p := range old {
		paths[p] = true
	}
	for p := range new {
		paths[p] = true
	}
	var sorted []string
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var b strings.Builder
	for _, p := range sorted {
		a, c := old[p], new[p]
		if a == nil && c == nil || a != nil && c != nil && bytes.Equal(a, c) {
			continue
		}
		m := "100644"
		if mode != nil && mode(p) != "" {
			m = mode(p)
		}
		zero := strings.Repeat("0", abbrev)
		fmt.Fprintf(&b, "diff --git a/%s b/%s\n", p, p)
		switch {
		case a == nil:
			fmt.Fprintf(&b, "new file mode %s\nindex %s..%s\n--- /dev/null\n+++ b/%s\n", m, zero, kernelsrc.BlobID(c)[:abbrev], p)
		case c == nil:
			fmt.Fprintf(&b, "deleted file mode %s\nindex %s..%s\n--- a/%s\n+++ /dev/null\n", m, kernelsrc.BlobID(a)[:abbrev], zero, p)
		default:
			fmt.Fprintf(&b, "index %s..%s %s\n--- a/%s\n+++ b/%s\n", kernelsrc.BlobID(a)[:abbrev], kernelsrc.BlobID(c)[:abbrev], m, p, p)
		}
		opt := linediff.DefaultOptions()
		opt.FuncName = linediff.DriverFuncName(linediff.KernelDriver(p))
		hunks, _, _ := linediff.UnifiedWith(a, c, opt)
		b.WriteString(hunks)
	}
	return b.String()
}

// finalOrBase returns the content of path after the series: its final
// content if the series touches it, else the base tree's (nil: absent).
func (s *Series) finalOrBase(path string, touched map[string][]byte) []byte {
	if c, ok := touched[path]; ok {
		return c
	}
	c, err := s.Tree.ReadFile(path)
	if err != nil {
		return nil
	}
	return c
}

// Interdiff returns the diff from the final tree of prev to the final tree
// of s, both generated against the same base: what git format-patch
// --interdiff=PREV writes below its "Interdiff against vN:" title, and what
// git diff prints between the tips of the two series' branches.
func (s *Series) Interdiff(prev *Series) string {
	oldT, newT := prev.FinalFiles(), s.FinalFiles()
	old, cur := map[string][]byte{}, map[string][]byte{}
	for p := range oldT {
		old[p], cur[p] = oldT[p], s.finalOrBase(p, newT)
	}
	for p := range newT {
		old[p], cur[p] = prev.finalOrBase(p, oldT), newT[p]
	}
	return TreeDiff(old, cur, func(p string) string {
		if s.Tree.Exists(p) {
			return s.Tree.Mode(p)
		}
		return ""
	})
}

// InterdiffTitle is the line git format-patch writes above an interdiff
// against the previous revision.
func InterdiffTitle(prevVersion int) string {
	return fmt.Sprintf("Interdiff against v%d:", prevVersion)
}

// RangeDiffTitle is the line git format-patch writes above a range-diff
// against the previous revision.
func RangeDiffTitle(prevVersion int) string {
	return fmt.Sprintf("Range-diff against v%d:", prevVersion)
}

// AppendToCover returns the cover letter with a section (a title line and
// its text) added after the diffstat, where git format-patch puts its
// --interdiff and --range-diff: before the base-commit line, or before the
// signature when there is none.
func AppendToCover(cover Message, title, text string) Message {
	at := strings.LastIndex(cover.Text, "\nbase-commit: ")
	if at < 0 {
		at = strings.LastIndex(cover.Text, "\n-- \n") + 1
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	cover.Text = cover.Text[:at] + title + "\n" + text + cover.Text[at:]
	return cover
}
