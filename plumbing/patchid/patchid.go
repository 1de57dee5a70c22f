package patchid

import (
	"crypto/sha1"
	"fmt"
	"strconv"
	"strings"

	"regexp"
)

var hunkCounts = regexp.MustCompile(`^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@`)

// Stable returns what git patch-id --stable prints for a diff: the sum of
// the SHA-1s of every file's diff with whitespace removed, without index
// lines, hunk line numbers or "\ No newline" markers.
func Stable(diff string) string {
	var result [sha1.Size]byte
	h := sha1.New()
	flush := func() {
		sum := h.Sum(nil)
		carry := 0
		for i := range result {
			carry += int(result[i]) + int(sum[i])
			result[i] = byte(carry)
			carry >>= 8
		}
		h.Reset()
	}
	before, after := -1, -1
	started := false
	for _, line := range strings.SplitAfter(diff, "\n") {
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "\\ ") && len(line) > 12 {
			continue
		}
		if !started && !strings.HasPrefix(line, "diff ") {
			continue
		}
		started = true
		if before == -1 {
			switch {
			case strings.HasPrefix(line, "index "):
				continue
			case strings.HasPrefix(line, "--- "):
				before, after = 1, 1
			case !isAlpha(line[0]):
				goto done
			}
		}
		if before == 0 && after == 0 {
			if m := hunkCounts.FindStringSubmatch(line); m != nil {
				before, after = count(m[1]), count(m[2])
				continue
			}
			if !strings.HasPrefix(line, "diff ") {
				break
			}
			flush()
			before, after = -1, -1
		}
		if line[0] == '-' || line[0] == ' ' {
			before--
		}
		if line[0] == '+' || line[0] == ' ' {
			after--
		}
		h.Write(withoutSpace(line))
	}
done:
	flush()
	return fmt.Sprintf("%x", result[:])
}

func count(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s)
	return n
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// withoutSpace returns line's bytes without git's whitespace: git's
// isspace is only space, tab, newline and carriage return (form feeds and
// vertical tabs stay), and it works on bytes, so a byte that is not UTF-8
// is hashed as itself.
func withoutSpace(line string) []byte {
	out := make([]byte, 0, len(line))
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			out = append(out, c)
		}
	}
	return out
}
