package verify

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestPastedNames: the names a file's own macros paste at its
// invocations, for the forms kernel files use.
func TestPastedNames(t *testing.T) {
	for _, c := range []struct {
		name, code string
		want       []string
	}{
		{"prefix", "#define bbr_param(sk,name)\t(bbr_ ## name)\nx = bbr_param(sk, tso_rtt_shift);\n",
			[]string{"bbr_tso_rtt_shift"}},
		{"suffix and chain, continued define", "#define SHOW(a, b) \\\n\tstatic int a##_##b##_show(void)\nSHOW(foo, bar)\n",
			[]string{"foo_bar_show"}},
		{"argument not an identifier", "#define P(x) p_##x\ny = P(1 + 2);\nz = P((q));\n",
			nil},
		{"wrong argument count", "#define P(x) p_##x\ny = P(a, b);\n", nil},
		{"nested parentheses in another argument", "#define Q(f, x) q_##x(f)\nQ(g(1, 2), name);\n",
			[]string{"q_name"}},
		{"no parameter pasted", "#define R(x) r_ ## s (x)\nR(t);\n", nil},
		{"no paste", "#define S(x) (x + 1)\nS(t);\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for n := range pastedNames([]byte(c.code)) {
				got = append(got, n)
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("pastedNames = %q, want %q", got, c.want)
			}
		})
	}
}

// BenchmarkPastedNamesUnclosed: a file of many pasting macros and many
// invocations that never close, each read at most maxInvocation bytes.
func BenchmarkPastedNamesUnclosed(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 20000; i++ {
		sb.WriteString("#define M" + strings.Repeat("x", i%7) + "_" + string(rune('a'+i%26)) + "(a) p_ ## a\n")
	}
	for i := 0; i < 50000; i++ {
		sb.WriteString("M_a(q(")
	}
	code := []byte(sb.String())
	b.SetBytes(int64(len(code)))
	for b.Loop() {
		pastedNames(code)
	}
}

// FuzzPastedNames: any text, defines and invocations cut anywhere, gives
// a set of identifiers and no panic.
func FuzzPastedNames(f *testing.F) {
	for _, s := range []string{
		"#define bbr_param(sk,name)\t(bbr_ ## name)\nx = bbr_param(sk, tso_rtt_shift);\n",
		"#define SHOW(a, b) \\\n\tstatic int a##_##b##_show(void)\nSHOW(foo, bar)\n",
		"#define V(a, ...) a ## __VA_ARGS__\nV(x, y, z)\n#define W(",
		"#define P(x) p_##x\nP(",
		"#define Q() q_ ## \nQ()",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		for name := range pastedNames([]byte(code)) {
			if !pasteWordRE().MatchString(name) {
				t.Fatalf("%q: not an identifier", name)
			}
		}
	})
}
