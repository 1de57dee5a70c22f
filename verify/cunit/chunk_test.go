package cunit

import (
	"fmt"
	"strings"
	"testing"
)

// TestCChunks: the lexical split hands cc/v4 whole definitions: braces in
// comments, strings and preprocessor lines do not count, a struct is not a
// function, and a function's name is the one before its parameters.
func TestCChunks(t *testing.T) {
	src := "#define X(a) { a }\n/* { */\nstruct s {\n\tint a; // }\n};\ntypedef int t_t;\n" +
		"static noinstr void f(const char *s)\n{\n\tg(\"}\", '{');\n}\nint v = 1;\n"
	var got []string
	for _, ch := range Chunks([]byte(src)) {
		got = append(got, fmt.Sprintf("%d-%d fn=%v typedef=%v brace=%v %s", ch.StartLine, ch.EndLine, ch.Fn, ch.Typedef, ch.Brace, ch.Name))
	}
	want := []string{
		"3-5 fn=false typedef=false brace=true ",
		"6-6 fn=false typedef=true brace=false ",
		"7-10 fn=true typedef=false brace=true f",
		"11-11 fn=false typedef=false brace=false ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("chunks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Blanking keeps the lines and the preprocessor lines.
	b := blankExcept([]byte(src), nil)
	if strings.Count(string(b), "\n") != strings.Count(src, "\n") || !strings.HasPrefix(string(b), "#define X(a) { a }\n") ||
		strings.Contains(string(b), "struct") {
		t.Errorf("blankExcept: %q", b)
	}
}
