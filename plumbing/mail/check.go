package mail

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// numbered is what the numbering check needs of a patch.
type numbered struct {
	n, total int
	title    string
}

// numberingError checks the numbers of patches (sorted by number, stably):
// every number within 1..total, none twice, none missing (when whole, the
// last ones too: a part of a thread may end early). It returns the index
// of the patch at fault and what is wrong, or -1 and "". For patches
// missing at the end the index is -2: the fault is the series', not one
// patch's.
func numberingError(ps []numbered, whole bool) (int, string) {
	for i, p := range ps {
		if p.n > p.total {
			return i, fmt.Sprintf("patch %d of %d (%q): its number is beyond the total: give the series as it was posted", p.n, p.total, p.title)
		}
	}
	for i := 1; i < len(ps); i++ {
		if p := ps[i]; ps[i-1].n == p.n {
			return i, fmt.Sprintf("patch %d of %d appears twice (%q and %q): give each patch once", p.n, p.total, ps[i-1].title, p.title)
		}
	}
	for i, p := range ps {
		if p.n != i+1 {
			return i, fmt.Sprintf("patch %d of %d is missing (found patch %d, %q): give every patch of the series", i+1, p.total, p.n, p.title)
		}
	}
	last := ps[len(ps)-1]
	if whole && last.n < last.total {
		missing := fmt.Sprintf("patch %d", last.total)
		if last.n+1 < last.total {
			missing = fmt.Sprintf("patches %d-%d", last.n+1, last.total)
		}
		return -2, fmt.Sprintf("%s of %d missing after patch %d (%q; the mail cut short?): give every patch of the series", missing, last.total, last.n, last.title)
	}
	return -1, ""
}

// sortByNumber sorts items by the number n returns, stably.
func sortByNumber[T any](items []T, n func(T) int) {
	sort.SliceStable(items, func(i, j int) bool { return n(items[i]) < n(items[j]) })
}

// hunkHeaderRE is a hunk header as git apply reads it (apply.c,
// parse_fragment_header): "@@ -OLD[,N] +NEW[,N] @@", numbers of digits.
var hunkHeaderRE = regexp.MustCompile(`^@@ -\d+(,\d+)? \+\d+(,\d+)? @@`)

// corruptHunk returns the first line of diff that starts like a hunk
// header ("@@") but is not one git apply reads, and its index among the
// lines of diff; ok is false when there is none. git apply refuses such a
// patch ("corrupt patch at line N"); go-gitdiff would read some of them.
func corruptHunk(diff string) (index int, line string, ok bool) {
	for i, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "@@") && !hunkHeaderRE.MatchString(l) {
			return i, l, true
		}
	}
	return 0, "", false
}

// utf16Of names the encoding of data when it is UTF-16 ("UTF-16LE" or
// "UTF-16BE", from its byte order mark or its zero bytes), and says
// whether it starts with a byte order mark; "" for other data.
func utf16Of(data []byte) (name string, bom bool) {
	switch {
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}):
		return "UTF-16LE", true
	case bytes.HasPrefix(data, []byte{0xfe, 0xff}):
		return "UTF-16BE", true
	}
	// Without a mark: ASCII text in UTF-16 has every other byte zero.
	n := min(len(data), 64) &^ 1
	if n < 8 {
		return "", false
	}
	var zeroEven, zeroOdd int
	for i := 0; i < n; i++ {
		if data[i] == 0 {
			if i%2 == 0 {
				zeroEven++
			} else {
				zeroOdd++
			}
		}
	}
	switch {
	case zeroOdd == n/2 && zeroEven == 0:
		return "UTF-16LE", false
	case zeroEven == n/2 && zeroOdd == 0:
		return "UTF-16BE", false
	}
	return "", false
}

// utf16Error is the error for a file in UTF-16, or nil.
func utf16Error(path string, data []byte) error {
	name, bom := utf16Of(data)
	if name == "" {
		return nil
	}
	from := name
	if bom {
		from = "UTF-16" // iconv reads the mark and drops it
	}
	return fmt.Errorf("%s: the file is %s, not mail text (git am refuses it too): convert it (iconv -f %s -t UTF-8 %s > patch.mbox) and give the result",
		path, name, from, path)
}
