package cunit

import (
	"strings"
	"testing"
)

func TestStripBodies(t *testing.T) {
	in := "struct s {\n\tint a;\n};\n#define M(x) do { x; } while (0)\nstatic inline int f(int a)\n{\n\tif (a) {\n\t\treturn 1;\n\t}\n\treturn 0;\n}\nint g(void) { return 2; }\nint v[] = { 1, 2 };\n"
	want := "struct s {\n\tint a;\n};\n#define M(x) do { x; } while (0)\nstatic inline int f(int a)\n\n\n\n\n\n;\nint g(void) ;\nint v[] = { 1, 2 };\n"
	if got := string(stripBodies([]byte(in))); got != want {
		t.Errorf("stripBodies:\n%s\nwant:\n%s", got, want)
	}
	if strings.Count(in, "\n") != strings.Count(want, "\n") {
		t.Fatal("the test's want must keep the lines")
	}
}
