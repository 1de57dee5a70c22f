package linediff

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.diff from the output of git")

// testdataCase is one pair of testdata/NAME.old and testdata/NAME.new with
// the hunks git writes for it in testdata/NAME.diff.
type testdataCase struct {
	name     string
	old, new []byte
	want     string
}

func loadTestdata(t *testing.T) []testdataCase {
	t.Helper()
	olds, err := filepath.Glob(filepath.Join("testdata", "*.old"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(olds)
	var cases []testdataCase
	for _, o := range olds {
		base := strings.TrimSuffix(o, ".old")
		c := testdataCase{name: filepath.Base(base)}
		if c.old, err = os.ReadFile(o); err != nil {
			t.Fatal(err)
		}
		if c.new, err = os.ReadFile(base + ".new"); err != nil {
			t.Fatal(err)
		}
		if want, err := os.ReadFile(base + ".diff"); err == nil {
			c.want = string(want)
		} else if !*update {
			t.Fatalf("%s: %v (run go test -update to create it with git)", c.name, err)
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		t.Fatal("no testdata")
	}
	return cases
}

// TestTestdata checks the hunks for every testdata pair against the
// output of git stored next to it.
func TestTestdata(t *testing.T) {
	cases := loadTestdata(t)
	if *update {
		requireGit(t)
		var gc []gitCase
		for _, c := range cases {
			gc = append(gc, gitCase{name: c.name, old: c.old, new: c.new})
		}
		for i, h := range gitHunks(t, gc, "") {
			cases[i].want = h
			if err := os.WriteFile(filepath.Join("testdata", cases[i].name+".diff"), []byte(h), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, added, deleted := Unified(c.old, c.new)
			if got != c.want {
				t.Fatalf("hunks differ from git:\n%s", sideBySide(c.want, got))
			}
			wa, wd := countLines(c.want)
			if added != wa || deleted != wd {
				t.Errorf("counts +%d -%d, want +%d -%d", added, deleted, wa, wd)
			}
		})
	}
}

// TestTestdataAgainstGit runs the testdata pairs through a live git with
// several context sizes and with the cpp diff driver.
func TestTestdataAgainstGit(t *testing.T) {
	requireGit(t)
	var plain, cpp []gitCase
	for _, c := range loadTestdata(t) {
		plain = append(plain, gitCase{name: c.name, old: c.old, new: c.new})
		cpp = append(cpp, gitCase{name: c.name + ".c", old: c.old, new: c.new})
	}
	n := 0
	for _, ctx := range []int{0, 1, 3, 5} {
		opt := Options{Context: ctx}
		n += compareWithGit(t, plain, "", opt, nil, "-U"+strconv.Itoa(ctx))
	}
	n += compareWithGit(t, cpp, "*.c diff=cpp\n", DefaultOptions(), func(string) FuncNameFunc { return CppFuncName })
	n += compareWithGit(t, plain, "", Options{Context: 3, InterHunkContext: 2}, nil, "--inter-hunk-context=2")
	t.Logf("%d cases compared with git", n)
}

func TestIdentical(t *testing.T) {
	for _, s := range []string{"", "a\n", "a", "a\nb\n"} {
		if h, a, d := Unified([]byte(s), []byte(s)); h != "" || a != 0 || d != 0 {
			t.Errorf("Unified(%q, same) = %q, %d, %d", s, h, a, d)
		}
	}
}

func TestHunkHeader(t *testing.T) {
	tests := []struct {
		s1, c1, s2, c2 int
		fn             string
		want           string
	}{
		{1, 0, 1, 15, "", "@@ -0,0 +1,15 @@\n"},
		{1, 1, 1, 1, "", "@@ -1 +1 @@\n"},
		{1, 3, 1, 0, "", "@@ -1,3 +0,0 @@\n"},
		{10, 0, 12, 2, "f()", "@@ -9,0 +12,2 @@ f()\n"},
		{25887, 6, 25887, 14, "F:\tx", "@@ -25887,6 +25887,14 @@ F:\tx\n"},
		{1234567890123, 12345678, 1234567890123, 12345678, strings.Repeat("x", 80),
			"@@ -1234567890123,12345678 +1234567890123,12345678 @@ " + strings.Repeat("x", 73) + "\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		writeHunkHeader(&b, tt.s1, tt.c1, tt.s2, tt.c2, []byte(tt.fn))
		if b.String() != tt.want {
			t.Errorf("header(%d,%d,%d,%d,%q) = %q, want %q", tt.s1, tt.c1, tt.s2, tt.c2, tt.fn, b.String(), tt.want)
		}
	}
}

func TestFuncNames(t *testing.T) {
	long := "static int " + strings.Repeat("a", 100) + "(void)\n"
	tests := []struct {
		rule FuncNameFunc
		line string
		want string
		ok   bool
	}{
		{DefaultFuncName, "int main(void)\n", "int main(void)", true},
		{DefaultFuncName, "_start:\n", "_start:", true},
		{DefaultFuncName, "$x = 1  \r\n", "$x = 1", true},
		{DefaultFuncName, "\tindented\n", "", false},
		{DefaultFuncName, "1digit\n", "", false},
		{DefaultFuncName, "\n", "", false},
		{DefaultFuncName, "", "", false},
		{DefaultFuncName, long, long[:80], true},
		{DefaultFuncName, "a" + strings.Repeat(" ", 90) + "b\n", "a", true},
		{CppFuncName, "int main(void)\n", "int main(void)", true},
		{CppFuncName, "out:\n", "", false},
		{CppFuncName, "err_free: /* comment */\n", "", false},
		{CppFuncName, "public:\n", "", false},
		{CppFuncName, "label: x = 1;\n", "label: x = 1;", true},
		{CppFuncName, ":: foo()\n", ":: foo()", true},
		{CppFuncName, "$x\n", "", false},
		{CppFuncName, "struct foo {\r\n", "struct foo {", true},
		{CppFuncName, long, long[:80], true},
		{DtsFuncName, "\tnode@1 {\n", "node@1 {", true},
		{DtsFuncName, "\tprop = <1>;\n", "", false},
		{DtsFuncName, "/ {\n", "/ {", true},
		{DtsFuncName, "&uart0 {\n", "&uart0 {", true},
		{RustFuncName, "pub fn main() {\n", "pub fn main() {", true},
		{RustFuncName, "    pub(crate) async fn x() -> u8 {\n", "pub(crate) async fn x() -> u8 {", true},
		{RustFuncName, "impl<T> Foo for T {\n", "impl<T> Foo for T {", true},
		{RustFuncName, "macro_rules! foo {\n", "macro_rules! foo {", true},
		{RustFuncName, "let x = 1;\n", "", false},
	}
	for _, tt := range tests {
		got, ok := tt.rule([]byte(tt.line))
		if ok != tt.ok || string(got) != tt.want {
			t.Errorf("rule(%q) = %q, %v; want %q, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestKernelDriver(t *testing.T) {
	tests := map[string]string{
		"kernel/unwind/user.c":                  "cpp",
		"include/linux/sched.h":                 "cpp",
		"arch/arm64/boot/dts/foo.dtsi":          "dts",
		"arch/arm64/boot/dts/foo.dts":           "dts",
		"arch/arm64/boot/dts/overlay.dtso":      "dts",
		"rust/kernel/lib.rs":                    "rust",
		"MAINTAINERS":                           "",
		"kernel/unwind/Makefile":                "",
		"Documentation/trace/index.rst":         "",
		"scripts/checkpatch.pl":                 "",
		"tools/testing/selftests/x.c.orig":      "",
		"arch/x86/include/asm/unwind_user.h.in": "",
	}
	for p, want := range tests {
		if got := KernelDriver(p); got != want {
			t.Errorf("KernelDriver(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestChanges(t *testing.T) {
	got := Changes([]byte("a\nb\nc\n"), []byte("a\nx\nc\nd\n"))
	want := []Change{{1, 1, 1, 1}, {3, 0, 3, 1}}
	if len(got) != len(want) {
		t.Fatalf("Changes = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("Changes = %v, want %v", got, want)
		}
	}
	if Changes([]byte("x\n"), []byte("x\n")) != nil {
		t.Error("Changes of identical inputs is not empty")
	}
}

func TestIsBinary(t *testing.T) {
	tests := []struct {
		data []byte
		want bool
	}{
		{nil, false},
		{[]byte("text\n"), false},
		{[]byte("a\x00b"), true},
		{append(bytes.Repeat([]byte("x"), 7999), 0), true},
		{append(bytes.Repeat([]byte("x"), 8000), 0), false},
	}
	for _, tt := range tests {
		if got := IsBinary(tt.data); got != tt.want {
			t.Errorf("IsBinary(%d bytes) = %v, want %v", len(tt.data), got, tt.want)
		}
	}
}

func TestKernelOptions(t *testing.T) {
	opt := KernelOptions("kernel/unwind/deferred.c")
	if opt.Context != 3 {
		t.Errorf("Context = %d", opt.Context)
	}
	if name, ok := opt.FuncName([]byte("out:\n")); ok {
		t.Errorf("kernel .c files must use the cpp driver, got %q", name)
	}
	if _, ok := KernelOptions("MAINTAINERS").FuncName([]byte("out:\n")); !ok {
		t.Error("MAINTAINERS must use the default rule")
	}
}
