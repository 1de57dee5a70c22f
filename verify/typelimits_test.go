package verify

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// typeLimitsTypes are the operand types of TestTypeLimitsAsGCC, with the
// typedefs the kernel gives its own.
var typeLimitsTypes = []string{"unsigned char", "signed char", "unsigned short", "short", "unsigned int", "int",
	"unsigned long", "long", "unsigned long long", "long long", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "size_t"}

var typeLimitsConsts = []string{"0", "-1", "1", "127", "128", "255", "256", "-129", "32767", "32768", "65535", "65536",
	"0x7fffffff", "0x80000000", "0xffffffff", "0x100000000", "-2147483648", "0xffffffffffffffff", "1UL", "-1L"}

var typeLimitsOps = []string{"<", "<=", ">", ">=", "==", "!="}

// typeLimitsFile writes a C file of one function per comparison of a
// parameter of each type with each constant by each operator (the constant
// on the right, and on the left), every step-th of them, and returns it
// with the line of each comparison.
func typeLimitsFile(step int) (string, map[int]string) {
	var b strings.Builder
	b.WriteString("// SPDX-License-Identifier: GPL-2.0\n")
	line := 1
	cmps := map[int]string{}
	i := 0
	for _, typ := range typeLimitsTypes {
		for _, c := range typeLimitsConsts {
			for _, op := range typeLimitsOps {
				for _, left := range []bool{false, true} {
					i++
					if i%step != 0 {
						continue
					}
					expr := "x " + op + " " + c
					if left {
						expr = c + " " + flip(op) + " x"
					}
					fmt.Fprintf(&b, "int f%d(%s x)\n{\n\treturn %s;\n}\n", i, typ, expr)
					cmps[line+3] = typ + ": " + expr
					line += 4
				}
			}
		}
	}
	return b.String(), cmps
}

// gccTypeLimits compiles src with gcc -Wtype-limits for the bits given
// and returns the lines it warns on.
func gccTypeLimits(t *testing.T, src string, bits int) map[int]bool {
	t.Helper()
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	c := filepath.Join(dir, "x.c")
	head := "typedef unsigned char u8; typedef unsigned short u16; typedef unsigned int u32; typedef unsigned long long u64;" +
		" typedef signed char s8; typedef short s16; typedef int s32; typedef long long s64; typedef __SIZE_TYPE__ size_t;"
	// the typedefs on the first line, so the comparisons keep their lines
	if err := os.WriteFile(c, []byte(head+strings.TrimPrefix(src, "// SPDX-License-Identifier: GPL-2.0")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gcc, fmt.Sprintf("-m%d", bits), "-O2", "-c", "-Wtype-limits", "-Wno-int-conversion", "-o", filepath.Join(dir, "x.o"), c)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if bits == 32 && strings.Contains(string(out), "bits/") {
			testenv.Missing(t, "gcc -m32 cannot compile", "apt-get install gcc-multilib")
		}
		t.Fatalf("gcc -m%d: %v\n%s", bits, err, out)
	}
	lines := map[int]bool{}
	re := regexp.MustCompile(`x\.c:(\d+):\d+: warning: .*\[-Wtype-limits\]`)
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		var n int
		fmt.Sscan(m[1], &n)
		lines[n] = true
	}
	return lines
}

// TestTypeLimitsAsGCC: a file of comparisons of every kind of operand type
// with constants at and across the types' limits, each in its own function:
// every one real gcc -Wtype-limits warns about on both x86_64 (-m64) and
// i386 (-m32) is TYPE_LIMITS, and every TYPE_LIMITS is one whose value,
// evaluated by the compiled program at the operand's extremes and around
// the constant, never changes on either (gcc warns of fewer: not of
// "unsigned x > -1", which converts -1 to the type's maximum).
func TestTypeLimitsAsGCC(t *testing.T) {
	step := 5
	if testing.Short() {
		step = 19
	}
	src, cmps := typeLimitsFile(step)
	g64, g32 := gccTypeLimits(t, src, 64), gccTypeLimits(t, src, 32)
	s := creationSeries(t, []string{"lib/limits.c"}, map[string][]byte{"lib/limits.c": []byte(src)})
	got := map[int]bool{}
	for _, f := range only(Run(s, Options{}), "TYPE_LIMITS") {
		got[f.Line] = true
	}
	var missed, extra []string
	for n, what := range cmps {
		if g64[n] && g32[n] && !got[n] {
			missed = append(missed, fmt.Sprintf("line %d %s", n, what))
		}
		if got[n] && !(g64[n] && g32[n]) {
			extra = append(extra, fmt.Sprintf("%d", n))
		}
	}
	sort.Strings(missed)
	for _, m := range missed {
		t.Errorf("gcc -Wtype-limits warns on both ABIs, verify does not: %s", m)
	}
	if len(g64) < 40 {
		t.Fatalf("gcc warns on only %d lines: the file tests too little", len(g64))
	}
	// the comparisons verify reports beyond gcc's: constant, run on both ABIs
	if len(extra) > 0 {
		for _, bits := range []int{64, 32} {
			for n, varies := range runComparisons(t, src, cmps, extra, bits) {
				if varies {
					t.Errorf("TYPE_LIMITS at line %d (%s) but its value changes with -m%d", n, cmps[n], bits)
				}
			}
		}
	}
	t.Logf("%d comparisons, gcc warns of %d (-m64) and %d (-m32), verify reports %d (%d beyond gcc on both)", len(cmps), len(g64), len(g32), len(got), len(extra))
}

// runComparisons compiles and runs a program that evaluates the
// comparisons at the lines given at their operand's extremes, 0, and
// around the constant, and returns whether each one's value changes.
func runComparisons(t *testing.T, src string, cmps map[int]string, lines []string, bits int) map[int]bool {
	t.Helper()
	gcc := testenv.Tool(t, "gcc", "gcc")
	var b strings.Builder
	b.WriteString("#include <stdio.h>\n#include <limits.h>\n#include <stdint.h>\n#include <stddef.h>\n" +
		"typedef unsigned char u8; typedef unsigned short u16; typedef unsigned int u32; typedef unsigned long long u64;" +
		" typedef signed char s8; typedef short s16; typedef int s32; typedef long long s64;\n")
	for _, l := range lines {
		var n int
		fmt.Sscan(l, &n)
		typ, expr, _ := strings.Cut(cmps[n], ": ")
		c := strings.Fields(strings.NewReplacer("x", " ", "<", " ", ">", " ", "=", " ", "!", " ").Replace(expr))[0]
		fmt.Fprintf(&b, "static int c%d(%s x) { return %s; }\n", n, typ, expr)
		fmt.Fprintf(&b, "static int v%d(void) { %s vals[] = { (%s)0, (%s)-1, (%s)1, (%s)(%s), (%s)((%s)+1), (%s)((%s)-1),"+
			" (%s)((unsigned long long)~0ULL >> 1), (%s)(1ULL << (sizeof(%s)*8-1)) }; int r = c%d(vals[0]);"+
			" for (unsigned i = 1; i < sizeof(vals)/sizeof(vals[0]); i++) if (c%d(vals[i]) != r) return 1; return 0; }\n",
			n, typ, typ, typ, typ, typ, c, typ, c, typ, c, typ, typ, typ, n, n)
	}
	b.WriteString("int main(void) {\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "\tprintf(\"%s %%d\\n\", v%s());\n", l, l)
	}
	b.WriteString("\treturn 0;\n}\n")
	dir := t.TempDir()
	c := filepath.Join(dir, "run.c")
	exe := filepath.Join(dir, "run")
	if err := os.WriteFile(c, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, fmt.Sprintf("-m%d", bits), "-w", "-o", exe, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc -m%d: %v\n%s", bits, err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatalf("run -m%d: %v", bits, err)
	}
	res := map[int]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var n, v int
		fmt.Sscan(l, &n, &v)
		res[n] = v != 0
	}
	return res
}
