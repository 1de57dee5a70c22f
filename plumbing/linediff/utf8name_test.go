package linediff

import (
	"fmt"
	"testing"
)

// TestFuncNameUTF8AgainstGit compares hunk-header function names that
// hold bytes git does not take as UTF-8 (Latin-1, cut sequences,
// surrogates, overlong forms, U+FFFE, beyond U+10FFFF) and valid
// multi-byte names cut at the 80-byte limit, under the default rule and
// under the kernel's cpp and dts drivers, with the real git.
func TestFuncNameUTF8AgainstGit(t *testing.T) {
	requireGit(t)
	names := []string{
		"int caf\xe9_bad(void)",
		"int \xe9x(void)",
		"int \t\xe9",
		"int a\xc3",
		"int a\xc3\xa9b(void)",
		"int a\xef\xbf\xbe b",
		"int a\xef\xbf\xbd b",
		"int a\xed\xa0\x80 b",
		"int a\xed\x9f\xbf b",
		"int a\xc0\x80 b",
		"int a\xc1\xbf b",
		"int a\xc2\x80 b",
		"int a\xf4\x90\x80\x80 b",
		"int a\xf4\x8f\xbf\xbf b",
		"int a\xf0\x8f\xbf\xbf b",
		"int a\xf0\x90\x80\x80 b",
		"int a\xe0\x9f\x80 b",
		"int a\xe0\xa0\x80 b",
		"int a\xf8\x88\x80\x80\x80 b",
		"int a\x80 b",
		"int a\x01\x7f b",
		"int a" + repeat("\xc3\xa9", 50),
		"int " + repeat("\xc3\xa9", 50),
		"int ab" + repeat("\xe2\x82\xac", 30),
		"int abc" + repeat("\xf0\x9f\x98\x80", 30),
	}
	var cases []gitCase
	for i, name := range names {
		var old []byte
		old = append(old, name...)
		old = append(old, '\n')
		for j := 0; j < 10; j++ {
			old = append(old, fmt.Sprintf("  a%d\n", j)...)
		}
		new := []byte(string(old))
		new = append(new[:len(new)-len("  a9\n")], "  changed\n"...)
		for _, ext := range []string{".txt", ".c", ".dts"} {
			cases = append(cases, gitCase{name: fmt.Sprintf("f%02d%s", i, ext), old: old, new: new})
		}
	}
	compareWithGit(t, cases, "*.c diff=cpp\n*.dts diff=dts\n", DefaultOptions(), func(name string) FuncNameFunc {
		return DriverFuncName(KernelDriver(name))
	})
}

func repeat(s string, n int) string {
	out := ""
	for i := 0; i < n; i++ {
		out += s
	}
	return out
}
