package lazyre

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestSameAsRegexp checks that every method gives what *regexp.Regexp
// gives for the same pattern and input.
func TestSameAsRegexp(t *testing.T) {
	tests := []struct {
		pattern, input string
	}{
		{`^(\w+):(\d+)$`, "fork.c:42"},
		{`[A-Z][A-Z0-9_]+`, "select HAVE_UNWIND_USER_FP if X86_64 && !IA32"},
		{`\b(?P<word>[a-z]+)\b`, "no Match here at ALL but these"},
		{`x*`, ""},
		{`nothing`, "something else"},
	}
	for _, tc := range tests {
		l, re := New(tc.pattern), regexp.MustCompile(tc.pattern)
		b := []byte(tc.input)
		for _, c := range []struct {
			name      string
			lazy, std any
		}{
			{"String", l.String(), re.String()},
			{"MatchString", l.MatchString(tc.input), re.MatchString(tc.input)},
			{"Match", l.Match(b), re.Match(b)},
			{"FindString", l.FindString(tc.input), re.FindString(tc.input)},
			{"FindStringIndex", l.FindStringIndex(tc.input), re.FindStringIndex(tc.input)},
			{"FindStringSubmatch", l.FindStringSubmatch(tc.input), re.FindStringSubmatch(tc.input)},
			{"FindAllString", l.FindAllString(tc.input, -1), re.FindAllString(tc.input, -1)},
			{"FindAllStringIndex", l.FindAllStringIndex(tc.input, 2), re.FindAllStringIndex(tc.input, 2)},
			{"FindAllStringSubmatch", l.FindAllStringSubmatch(tc.input, -1), re.FindAllStringSubmatch(tc.input, -1)},
			{"FindSubmatch", l.FindSubmatch(b), re.FindSubmatch(b)},
			{"FindAllSubmatch", l.FindAllSubmatch(b, -1), re.FindAllSubmatch(b, -1)},
			{"ReplaceAllString", l.ReplaceAllString(tc.input, "<$1>"), re.ReplaceAllString(tc.input, "<$1>")},
			{"SubexpIndex", l.SubexpIndex("word"), re.SubexpIndex("word")},
			{"FindAll", l.FindAll(b, -1), re.FindAll(b, -1)},
			{"FindSubmatchIndex", l.FindSubmatchIndex(b), re.FindSubmatchIndex(b)},
			{"FindAllSubmatchIndex", l.FindAllSubmatchIndex(b, -1), re.FindAllSubmatchIndex(b, -1)},
			{"FindIndex", l.FindIndex(b), re.FindIndex(b)},
		} {
			if !reflect.DeepEqual(c.lazy, c.std) {
				t.Errorf("%s on %q with %q: lazy gives %#v, regexp %#v", c.name, tc.input, tc.pattern, c.lazy, c.std)
			}
		}
	}
}

// TestCompiledOnFirstUse checks that New does not compile (a bad pattern
// is not noticed until it is used), that using it panics as
// regexp.MustCompile does, and that All reports it.
func TestCompiledOnFirstUse(t *testing.T) {
	if err := All(); err != nil {
		t.Fatalf("All before a bad pattern: %v", err)
	}
	bad := New(`(unclosed`) // must not panic here
	if err := All(); err == nil || !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("All with %q declared: got %v, want the compile error", bad, err)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("using %q did not panic", bad)
		}
	}()
	bad.MatchString("x")
}
