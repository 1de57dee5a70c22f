package spec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// lineMark starts every line of a patch declaration before it is rendered,
// so that the rendered text still says which line of the file each line
// comes from.
var lineMark = regexp.MustCompile("\x01(\\d+)\x02")

// trimTrailingMarks removes the marks of control lines at the end of a
// rendered file: what the regular expression (\x01\d+\x02)+$ matches
// (a whole-text regexp scan costs more than the rest of the render).
func trimTrailingMarks(s string) string {
	for {
		t, ok := cutMark(s, false)
		if !ok {
			return s
		}
		s = t
	}
}

// cutMark removes one line mark, \x01 digits \x02, from the start of s
// (front) or from its end, and reports whether there was one.
func cutMark(s string, front bool) (string, bool) {
	var m string
	if front {
		if !strings.HasPrefix(s, "\x01") {
			return s, false
		}
		end := strings.IndexByte(s, '\x02')
		if end < 0 {
			return s, false
		}
		m = s[1:end]
		s = s[end+1:]
	} else {
		if !strings.HasSuffix(s, "\x02") {
			return s, false
		}
		start := strings.LastIndexByte(s, '\x01')
		if start < 0 {
			return s, false
		}
		m = s[start+1 : len(s)-1]
		s = s[:start]
	}
	if m == "" || strings.Trim(m, "0123456789") != "" {
		return s, false
	}
	return s, true
}

func numberLines(src string) string {
	var b strings.Builder
	for i, l := range strings.SplitAfter(src, "\n") {
		if l == "" {
			continue
		}
		fmt.Fprintf(&b, "\x01%d\x02%s", i+1, l)
	}
	return b.String()
}

// unmark strips the line marks of one rendered line and returns the line
// number of the file it comes from (the last mark at its start).
func unmark(l string) (string, int) {
	n := 0
	for strings.HasPrefix(l, "\x01") {
		end := strings.IndexByte(l, '\x02')
		if end < 0 {
			break
		}
		n, _ = strconv.Atoi(l[1:end])
		l = l[end+1:]
	}
	if strings.IndexByte(l, '\x01') >= 0 { // marks inside a line: a guard mid-line
		l = lineMark.ReplaceAllString(l, "")
	}
	return l, n
}

// trimLeadingMarks removes the line marks of numberLines at the start of a
// line: what ^(\x01\d+\x02)+ matches.
func trimLeadingMarks(l string) string {
	for {
		t, ok := cutMark(l, true)
		if !ok {
			return l
		}
		l = t
	}
}
