package patchid

import (
	"crypto/sha1"
	"fmt"
	"strings"
)

// Stable returns what git patch-id --stable (git 2.39) prints for a diff:
// the sum of the SHA-1s of every file's diff with whitespace removed,
// without index lines, hunk line numbers or "\ No newline" markers. A
// binary file's diff ("Binary files ... differ", "GIT binary patch") is
// hashed as its header lines and the two object ids of its index line, as
// git writes them there (abbreviated unless the diff was made with
// --full-index or --binary); its binary data is skipped. Text before the
// first "diff " line (a mail's header and message) is ignored, and the
// diff ends where git's does: at a line that is neither a hunk's nor a
// file header's (a signature's "-- "), or at the start of the next
// commit ("commit ID", "From ID" or a line starting with an object id).
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
	patchLen := 0
	binary := false
	var oldID, newID string // of the last index line
	for len(diff) > 0 {
		line := diff
		if i := strings.IndexByte(diff, '\n'); i >= 0 {
			line, diff = diff[:i+1], diff[i+1:]
		} else {
			diff = ""
		}
		// git reads each line as a C string: it ends at a NUL byte.
		if i := strings.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		p, prefixed := strings.CutPrefix(line, "commit ")
		if !prefixed {
			p, prefixed = strings.CutPrefix(line, "From ")
		}
		if !prefixed && strings.HasPrefix(line, "\\ ") && len(line) > 12 {
			continue
		}
		if startsWithID(p) {
			if patchLen > 0 {
				break // the next commit's
			}
			continue
		}
		if patchLen == 0 && !strings.HasPrefix(line, "diff ") {
			continue
		}
		if before == -1 {
			switch {
			case strings.HasPrefix(line, "GIT binary patch"), strings.HasPrefix(line, "Binary files"):
				binary = true
				before = 0
				h.Write([]byte(oldID))
				h.Write([]byte(newID))
				flush()
				continue
			case strings.HasPrefix(line, "index "):
				if o, n, ok := indexIDs(line); ok {
					oldID, newID = o, n
				}
				continue
			case strings.HasPrefix(line, "--- "):
				before, after = 1, 1
			case !isAlpha(first(line)):
				goto done
			}
		}
		if binary {
			// The binary data, up to the next file's diff line (which
			// is not hashed, as in git).
			if strings.HasPrefix(line, "diff ") {
				binary = false
				before = -1
			}
			continue
		}
		if before == 0 && after == 0 {
			if strings.HasPrefix(line, "@@ -") {
				before, after = hunkCounts(line, before, after)
				continue
			}
			if !strings.HasPrefix(line, "diff ") {
				break
			}
			flush()
			before, after = -1, -1
		}
		if c := first(line); c == '-' || c == ' ' {
			before--
		}
		if c := first(line); c == '+' || c == ' ' {
			after--
		}
		b := withoutSpace(line)
		patchLen += len(b)
		h.Write(b)
	}
done:
	flush()
	return fmt.Sprintf("%x", result[:])
}

// first returns the first byte of line, 0 for an empty one (a C string's
// terminator).
func first(line string) byte {
	if line == "" {
		return 0
	}
	return line[0]
}

// indexIDs returns the two ids of an "index OLD..NEW[ MODE]" line as git
// patch-id takes them: OLD from after "index " to the "..", NEW from
// there to the next space or, without one, to the line's last byte (its
// newline); each at most 64 bytes. ok is false without "..".
func indexIDs(line string) (old, new string, ok bool) {
	dots := strings.Index(line, "..")
	if dots < 0 {
		return "", "", false
	}
	end := len(line) - 1
	if sp := strings.IndexByte(line[dots:], ' '); sp >= 0 {
		end = dots + sp
	}
	old = line[len("index "):dots]
	if end >= dots+2 {
		new = line[dots+2 : end]
	}
	return old[:min(len(old), 64)], new[:min(len(new), 64)], true
}

// hunkCounts reads the line counts of a hunk header "@@ -A[,B] +C[,D]"
// as git patch-id does: a count left out is 1; a header it cannot read
// leaves what it has not read as it was.
func hunkCounts(line string, before, after int) (int, int) {
	q := line[len("@@ -"):]
	n := digits(q)
	if n < len(q) && q[n] == ',' {
		q = q[n+1:]
		before = atoi(q)
		n = digits(q)
	} else {
		before = 1
	}
	if n == 0 || n+1 >= len(q) || q[n] != ' ' || q[n+1] != '+' {
		return before, after
	}
	r := q[n+2:]
	n = digits(r)
	if n < len(r) && r[n] == ',' {
		r = r[n+1:]
		after = atoi(r)
	} else {
		after = 1
	}
	return before, after
}

// digits returns the length of the run of decimal digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// atoi is C's atoi on the digits s starts with (0 for none).
func atoi(s string) int {
	v := 0
	for i := 0; i < digits(s) && v < 1<<40; i++ {
		v = v*10 + int(s[i]-'0')
	}
	return v
}

// startsWithID reports whether s starts with a 40-digit hex object id
// (either case), as git patch-id's get_oid_hex reads it.
func startsWithID(s string) bool {
	if len(s) < 40 {
		return false
	}
	for i := 0; i < 40; i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
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
