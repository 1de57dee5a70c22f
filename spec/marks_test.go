package spec

import (
	"regexp"
	"testing"
)

// TestMarksMatchRegexp checks the hand-written trimming of line marks
// against the regular expressions it replaces, on the marks and near
// misses a rendered declaration can hold.
func TestMarksMatchRegexp(t *testing.T) {
	trailing := regexp.MustCompile("(\x01\\d+\x02)+$")
	leading := regexp.MustCompile("^(\x01\\d+\x02)+")
	parts := []string{"\x01", "\x02", "1", "42", "x", "\n", "\x01" + "7" + "\x02", "\x0112\x02", "\x01\x02", "\x01a\x02", " "}
	var inputs []string
	var gen func(prefix string, depth int)
	gen = func(prefix string, depth int) {
		inputs = append(inputs, prefix)
		if depth == 0 {
			return
		}
		for _, p := range parts {
			gen(prefix+p, depth-1)
		}
	}
	gen("", 4)
	inputs = append(inputs, "line\n\x013\x02\x014\x02", "\x011\x02\x012\x02code\n", "a\x011\x02b\x012\x02")
	for _, in := range inputs {
		if got, want := trimTrailingMarks(in), trailing.ReplaceAllString(in, ""); got != want {
			t.Errorf("trimTrailingMarks(%q) = %q, the regexp gives %q", in, got, want)
		}
		if got, want := trimLeadingMarks(in), leading.ReplaceAllString(in, ""); got != want {
			t.Errorf("trimLeadingMarks(%q) = %q, the regexp gives %q", in, got, want)
		}
	}
	if len(inputs) < 10000 {
		t.Fatalf("only %d inputs", len(inputs))
	}
}
