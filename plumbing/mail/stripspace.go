package mail

import "strings"

// stripspace cleans a commit message as git stripspace (and so git am and
// git commit) does: trailing white space taken off every line, blank lines
// at the start and the end dropped, a run of blank lines made one, and the
// last line ended with a newline; "" for text that is only white space.
func stripspace(s string) string {
	var b strings.Builder
	blank := false
	for _, line := range strings.SplitAfter(s, "\n") {
		line = strings.TrimRight(line, " \t\n\r")
		if line == "" {
			blank = true
			continue
		}
		if blank && b.Len() > 0 {
			b.WriteByte('\n')
		}
		blank = false
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
