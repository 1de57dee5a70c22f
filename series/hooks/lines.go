package hooks

import (
	"regexp"
	"strings"
)

// prefiltered returns re.MatchString, tried only on lines that contain
// want: most lines of a kernel file are rejected without the regexp.
func prefiltered(want string, re *regexp.Regexp) func(string) bool {
	return func(l string) bool { return strings.Contains(l, want) && re.MatchString(l) }
}

// includeOf matches the #include line of header ("<linux/x.h>").
func includeOf(header string) func(string) bool {
	return prefiltered(header, regexp.MustCompile(`^#\s*include\s+`+regexp.QuoteMeta(header)+`(\s|$)`))
}

// atLines is an anchorErr about lines of the file; detail has one "%s".
func atLines(err error, detail string, lines ...int) error {
	return &anchorErr{err: err, detail: detail, lines: lines}
}

// lines is a file split after every newline.
type lines []string

func split(b []byte) lines {
	if len(b) == 0 {
		return nil
	}
	return splitString(string(b))
}

// splitString is split of a string.
func splitString(s string) lines {
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func (f lines) bytes() []byte { return []byte(strings.Join(f, "")) }

func (f lines) insert(at int, text lines) lines {
	out := make(lines, 0, len(f)+len(text))
	out = append(out, f[:at]...)
	out = append(out, text...)
	return append(out, f[at:]...)
}

// unique returns the index of the only line in [from, to) that matches.
func (f lines) unique(match func(string) bool, from, to int) (int, error) {
	var hits []int
	for i := from; i < to; i++ {
		if match(f[i]) {
			hits = append(hits, i)
		}
	}
	switch len(hits) {
	case 0:
		return 0, missing("")
	case 1:
		return hits[0], nil
	}
	return 0, atLines(ErrAnchorAmbiguous, "lines %s", hits...)
}

// guardEnd returns the line of the #endif that closes a header's include
// guard: its last line that is not blank.
func (f lines) guardEnd() (int, error) {
	for i := len(f) - 1; i >= 0; i-- {
		switch t := strings.TrimSpace(f[i]); {
		case t == "":
			continue
		case strings.HasPrefix(t, "#endif"):
			return i, nil
		default:
			return 0, missing("the header does not end with the #endif of its include guard")
		}
	}
	return 0, missing("empty file")
}

// commentAbove returns the first line of the comment block that ends right
// above line i, or i when there is none.
func (f lines) commentAbove(i int) int {
	j := i
	for j > 0 {
		t := strings.TrimSpace(f[j-1])
		if strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") || strings.HasSuffix(t, "*/") || strings.HasPrefix(t, "//") {
			j--
			continue
		}
		break
	}
	return j
}

// commentsAbove returns the first of the comment lines ("#" alone or
// followed by a blank, or C comment lines) that stand right above line i,
// not above from; i when there are none.
func (f lines) commentsAbove(i, from int) int {
	j := i
	for j > from {
		t := strings.TrimSpace(f[j-1])
		if t == "#" || strings.HasPrefix(t, "# ") || strings.HasPrefix(t, "#\t") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "//") {
			j--
			continue
		}
		break
	}
	return j
}
