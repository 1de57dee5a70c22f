// Package weave turns the successive versions of a file into one kpatch
// template, in the manner of an SCCS weave: every run of lines is kept once
// and guarded by the patches that bring it in and take it out
// ({{if since "id"}}, {{if before "id"}}, {{if between "a" "b"}}).
//
// It is how the series' templates under templates/linux/files were first
// written from the posted v11 series; after that they are edited by hand.
package weave

import (
	"fmt"
	"strings"
)

// Version is one state of a file: the content after the patch with the given id.
type Version struct {
	ID      string
	Content string
}

type line struct {
	text       string
	born, died int // indexes into the versions; died -1 while alive
}

// Weave returns a template whose render after version i (with the patches
// named by the versions' ids applied in order) is versions[i].Content. The
// file is created by versions[0].
func Weave(versions []Version) (string, error) {
	if len(versions) == 0 {
		return "", fmt.Errorf("no versions")
	}
	for _, v := range versions {
		if v.Content != "" && !strings.HasSuffix(v.Content, "\n") {
			return "", fmt.Errorf("the version after %q does not end in a newline: not supported", v.ID)
		}
	}
	contents := make([]string, len(versions))
	for i, v := range versions {
		contents[i] = v.Content
	}
	w := weaveLines(contents)

	var b strings.Builder
	fmt.Fprintf(&b, "{{created %q}}\n", versions[0].ID)
	guard := func(l line) string {
		switch {
		case l.born == 0 && l.died < 0:
			return ""
		case l.died < 0:
			return fmt.Sprintf("since %q", versions[l.born].ID)
		case l.born == 0:
			return fmt.Sprintf("before %q", versions[l.died].ID)
		default:
			return fmt.Sprintf("between %q %q", versions[l.born].ID, versions[l.died].ID)
		}
	}
	for i := 0; i < len(w); {
		j := i
		for j < len(w) && w[j].born == w[i].born && w[j].died == w[i].died {
			j++
		}
		g := guard(w[i])
		if g == "" {
			writeLines(&b, w[i:j])
			i = j
			continue
		}
		fmt.Fprintf(&b, "{{if %s}}\n", g)
		writeLines(&b, w[i:j])
		// A run replaced by the patch that removes it: {{else}}.
		if w[i].born == 0 && w[i].died > 0 && j < len(w) && w[j].born == w[i].died && w[j].died < 0 {
			k := j
			for k < len(w) && w[k].born == w[j].born && w[k].died == w[j].died {
				k++
			}
			b.WriteString("{{else}}\n")
			writeLines(&b, w[j:k])
			j = k
		}
		b.WriteString("{{end}}\n")
		i = j
	}
	return b.String(), nil
}

// weaveLines weaves the successive contents of a file: every line once,
// with the index of the content that brings it in and of the one that
// takes it out (-1 while it stays).
func weaveLines(contents []string) []line {
	var w []line
	for _, l := range splitLines(contents[0]) {
		w = append(w, line{text: l, born: 0, died: -1})
	}
	for v := 1; v < len(contents); v++ {
		var alive []int
		var cur []string
		for i, l := range w {
			if l.died < 0 {
				alive = append(alive, i)
				cur = append(cur, l.text)
			}
		}
		next := splitLines(contents[v])
		keep := lcs(cur, next) // pairs (i in cur, j in next)
		var out []line
		ci, nj := 0, 0
		wi := 0
		flushNew := func(upto int) {
			for ; nj < upto; nj++ {
				out = append(out, line{text: next[nj], born: v, died: -1})
			}
		}
		for _, k := range append(keep, [2]int{len(cur), len(next)}) {
			// Lines of cur before k[0] die; lines of next before k[1] are born.
			for ; ci < k[0]; ci++ {
				for ; wi <= alive[ci]; wi++ {
					out = append(out, w[wi])
				}
				out[len(out)-1].died = v
			}
			if k[0] == len(cur) {
				for ; wi < len(w); wi++ {
					out = append(out, w[wi])
				}
				flushNew(k[1])
				break
			}
			// Dead lines just before the kept line stay before the new ones.
			for ; wi < alive[k[0]]; wi++ {
				out = append(out, w[wi])
			}
			flushNew(k[1])
			out = append(out, w[wi])
			wi++
			ci, nj = k[0]+1, k[1]+1
		}
		w = out
	}

	return w
}

func writeLines(b *strings.Builder, ls []line) {
	for _, l := range ls {
		b.WriteString(strings.ReplaceAll(l.text, "{{", "{{\"{{\"}}"))
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// lcs returns the matched index pairs of a longest common subsequence.
func lcs(a, b []string) [][2]int {
	n, m := len(a), len(b)
	dp := make([][]int32, n+1)
	for i := range dp {
		dp[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else if dp[i+1][j] >= dp[i][j+1] {
				dp[i][j] = dp[i+1][j]
			} else {
				dp[i][j] = dp[i][j+1]
			}
		}
	}
	var out [][2]int
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			out = append(out, [2]int{i, j})
			i++
			j++
		case dp[i+1][j] >= dp[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}
