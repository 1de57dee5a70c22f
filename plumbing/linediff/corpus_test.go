package linediff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Statement and declaration lines used to build C-like random files. The
// many repeated lines ("}", "", "\treturn 0;") are what makes xdiff's
// discarding and sliding heuristics matter.
var (
	cStatements = []string{
		"\tint ret = 0;", "\tint i;", "\tunsigned long flags;", "\tstruct task_struct *p = current;",
		"\treturn 0;", "\treturn ret;", "\treturn -EINVAL;", "\tret = do_something(p);",
		"\tif (ret)", "\t\tgoto out;", "\t\treturn ret;", "\tspin_lock_irqsave(&lock, flags);",
		"\tspin_unlock_irqrestore(&lock, flags);", "\tmutex_lock(&mutex);", "\tmutex_unlock(&mutex);",
		"\tWARN_ON_ONCE(!p);", "\tkfree(buf);", "\tbuf = kmalloc(size, GFP_KERNEL);", "\tif (!buf)",
		"\t\treturn -ENOMEM;", "", "\t/* comment */", "\tbreak;", "\tcontinue;", "\tx++;",
		"\t\tbreak;", "\t\tcontinue;", "\tsmp_mb();", "\trcu_read_lock();", "\trcu_read_unlock();",
	}
	cTopLevel = []string{
		"#include <linux/kernel.h>", "#include <linux/sched.h>", "#include <linux/slab.h>",
		"#define FOO 1", "#define BAR(x) ((x) + 1)", "static DEFINE_MUTEX(mutex);",
		"static LIST_HEAD(callbacks);", "/*", " * A comment block.", " */", "",
		"EXPORT_SYMBOL_GPL(foo);",
	}
	cTypes = []string{"int", "void", "static int", "static void", "static inline bool", "unsigned long", "static __always_inline void"}
	cNames = []string{"foo", "bar", "baz", "unwind_user", "do_exit", "process", "handle_irq", "init", "cleanup", "update"}
)

// genBlock writes a random statement block at the given tab depth.
func genBlock(r *rand.Rand, b *strings.Builder, depth, n int) {
	ind := strings.Repeat("\t", depth-1)
	for i := 0; i < n; i++ {
		switch k := r.IntN(12); {
		case k == 0 && depth < 4:
			fmt.Fprintf(b, "%s\tif (%s) {\n", ind, cNames[r.IntN(len(cNames))])
			genBlock(r, b, depth+1, 1+r.IntN(4))
			fmt.Fprintf(b, "%s\t}\n", ind)
		case k == 1 && depth < 4:
			fmt.Fprintf(b, "%s\tfor (i = 0; i < n; i++) {\n", ind)
			genBlock(r, b, depth+1, 1+r.IntN(3))
			fmt.Fprintf(b, "%s\t}\n", ind)
		case k == 2:
			b.WriteString("\n")
		case k == 3 && depth == 1 && r.IntN(3) == 0:
			b.WriteString("out:\n")
		default:
			s := cStatements[r.IntN(len(cStatements))]
			if s != "" {
				s = ind + s
			}
			b.WriteString(s + "\n")
		}
	}
}

// genFunction writes a random C function.
func genFunction(r *rand.Rand, b *strings.Builder) {
	fmt.Fprintf(b, "%s %s_%d(%s)\n{\n", cTypes[r.IntN(len(cTypes))], cNames[r.IntN(len(cNames))], r.IntN(50), "struct foo *f")
	genBlock(r, b, 1, 2+r.IntN(12))
	b.WriteString("}\n")
}

// genCFile returns a random C-like file with about nfuncs functions.
func genCFile(r *rand.Rand, nfuncs int) []byte {
	var b strings.Builder
	for i := 0; i < 1+r.IntN(5); i++ {
		b.WriteString(cTopLevel[r.IntN(len(cTopLevel))] + "\n")
	}
	b.WriteString("\n")
	for i := 0; i < nfuncs; i++ {
		genFunction(r, &b)
		b.WriteString("\n")
		if r.IntN(4) == 0 {
			b.WriteString(cTopLevel[r.IntN(len(cTopLevel))] + "\n\n")
		}
	}
	return []byte(b.String())
}

// randomLines returns n lines of random C-like text.
func randomLines(r *rand.Rand, n int) []string {
	var b strings.Builder
	switch r.IntN(3) {
	case 0:
		genFunction(r, &b)
		b.WriteString("\n")
	case 1:
		genBlock(r, &b, 1+r.IntN(2), n)
	default:
		for i := 0; i < n; i++ {
			if r.IntN(2) == 0 {
				fmt.Fprintf(&b, "\tunique_%d_%d();\n", r.IntN(1000), i)
			} else {
				b.WriteString(cStatements[r.IntN(len(cStatements))] + "\n")
			}
		}
	}
	return strings.SplitAfter(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// mutate applies between 1 and maxEdits random edits to data: deletions,
// insertions, replacements, block moves and copies, and changes of the
// final newline.
func mutate(r *rand.Rand, data []byte, maxEdits int) []byte {
	lines := splitLinesStr(string(data))
	for k := 1 + r.IntN(maxEdits); k > 0; k-- {
		n := len(lines)
		pos := 0
		if n > 0 {
			pos = r.IntN(n + 1)
		}
		size := 1 + r.IntN(8)
		switch op := r.IntN(10); {
		case op < 2 && n > 0: // delete
			end := min(pos+size, n)
			lines = append(lines[:pos:pos], lines[end:]...)
		case op < 4: // insert
			ins := randomLines(r, size)
			lines = append(lines[:pos:pos], append(ins, lines[pos:]...)...)
		case op < 6 && n > 0: // replace
			end := min(pos+size, n)
			ins := randomLines(r, 1+r.IntN(size))
			lines = append(lines[:pos:pos], append(ins, lines[end:]...)...)
		case op < 7 && n > 2: // move a block
			end := min(pos+size*3, n)
			blk := append([]string(nil), lines[pos:end]...)
			rest := append(lines[:pos:pos], lines[end:]...)
			to := r.IntN(len(rest) + 1)
			lines = append(rest[:to:to], append(blk, rest[to:]...)...)
		case op < 8 && n > 2: // copy a block
			end := min(pos+size*2, n)
			blk := append([]string(nil), lines[pos:end]...)
			to := r.IntN(n + 1)
			lines = append(lines[:to:to], append(blk, lines[to:]...)...)
		case op < 9 && n > 0: // toggle the final newline
			last := lines[n-1]
			if strings.HasSuffix(last, "\n") {
				lines[n-1] = strings.TrimSuffix(last, "\n")
			} else {
				lines[n-1] = last + "\n"
			}
		default: // duplicate a single line (repeated lines)
			if n > 0 {
				l := lines[r.IntN(n)]
				if !strings.HasSuffix(l, "\n") {
					l += "\n"
				}
				lines = append(lines[:pos:pos], append([]string{l}, lines[pos:]...)...)
			}
		}
		// Only the last line may lack its newline.
		for i := 0; i+1 < len(lines); i++ {
			if !strings.HasSuffix(lines[i], "\n") {
				lines[i] += "\n"
			}
		}
	}
	return []byte(strings.Join(lines, ""))
}

func splitLinesStr(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// randomCases builds n seeded random old/new pairs of C-like files.
func randomCases(seed uint64, n int) []gitCase {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var cases []gitCase
	for i := 0; i < n; i++ {
		var old []byte
		switch i % 10 {
		case 0:
			old = nil // new file
		case 1:
			old = genCFile(r, 1)
		default:
			old = genCFile(r, 1+r.IntN(8))
		}
		var new []byte
		switch {
		case i%10 == 0:
			new = genCFile(r, 1+r.IntN(3))
		case i%37 == 5:
			new = nil // file emptied
		default:
			new = mutate(r, old, 1+r.IntN(6))
		}
		if bytes.Equal(old, new) {
			new = append(append([]byte(nil), new...), "\tx++;\n"...)
		}
		cases = append(cases, gitCase{name: fmt.Sprintf("r%04d.c", i), old: old, new: new})
	}
	return cases
}

// heavyCases builds pairs with a large edit cost, which drive xdiff's
// Myers search into its cost-limiting heuristics.
func heavyCases(seed uint64, n int) []gitCase {
	r := rand.New(rand.NewPCG(seed, 7))
	var cases []gitCase
	for i := 0; i < n; i++ {
		vocab := 20 + r.IntN(200)
		size := 1500 + r.IntN(4000)
		gen := func() []byte {
			var b strings.Builder
			for j := 0; j < size; j++ {
				fmt.Fprintf(&b, "line %d\n", r.IntN(vocab))
			}
			return []byte(b.String())
		}
		old := gen()
		var new []byte
		if i%2 == 0 {
			new = gen()
		} else {
			new = mutate(r, old, 200)
		}
		cases = append(cases, gitCase{name: fmt.Sprintf("h%03d.txt", i), old: old, new: new})
	}
	// Files big enough (over 65536 lines in all) for xdiff to raise its
	// cost limit above the snake heuristic's threshold, with many block
	// swaps separated by long common runs.
	for i := 0; i < n/6; i++ {
		size := 33000 + r.IntN(8000)
		lines := make([]string, size)
		for j := range lines {
			lines[j] = fmt.Sprintf("l%d\n", j%(size-r.IntN(3)))
		}
		old := strings.Join(lines, "")
		spacing := 22 + r.IntN(40)
		for j := r.IntN(spacing); j+12 < size; j += spacing + r.IntN(spacing) {
			a, b := 1+r.IntN(6), 1+r.IntN(6)
			blk := append(append([]string(nil), lines[j+a:j+a+b]...), lines[j:j+a]...)
			copy(lines[j:], blk)
		}
		cases = append(cases, gitCase{name: fmt.Sprintf("hbig%03d.txt", i), old: []byte(old), new: []byte(strings.Join(lines, ""))})
	}
	return cases
}

// indentCases builds pairs whose lines stress the indent heuristic:
// mixed tab and space indentation (up to past its 200-column cap),
// whitespace-only lines, long runs of blank lines (past its cap of 20),
// CRLF endings and a few distinct lines repeated a lot, so that changed
// groups can slide far.
func indentCases(seed uint64, n int) []gitCase {
	r := rand.New(rand.NewPCG(seed, 99))
	pick := func() string {
		switch k := r.IntN(14); {
		case k < 3:
			return "\n"
		case k == 3:
			return strings.Repeat(" ", r.IntN(6)) + "\t\n"
		case k == 4:
			return strings.Repeat("\n", 15+r.IntN(10))
		case k == 5:
			return strings.Repeat(" ", 190+r.IntN(30)) + "deep\n"
		case k == 6:
			return "x\r\n"
		default:
			ind := strings.Repeat("\t", r.IntN(4)) + strings.Repeat(" ", r.IntN(3)*2)
			return ind + []string{"{", "}", "foo();", "bar();", "if (x)", "else", "return;"}[r.IntN(7)] + "\n"
		}
	}
	var cases []gitCase
	for i := 0; i < n; i++ {
		var b strings.Builder
		for j := 20 + r.IntN(80); j > 0; j-- {
			b.WriteString(pick())
		}
		old := []byte(b.String())
		lines := splitLinesStr(b.String())
		for k := 1 + r.IntN(4); k > 0; k-- {
			pos := r.IntN(len(lines) + 1)
			var ins []string
			if r.IntN(2) == 0 && pos > 0 {
				// Repeat the lines just before pos: the group can
				// slide over them.
				from := max(pos-1-r.IntN(6), 0)
				ins = append(ins, lines[from:pos]...)
			} else {
				for j := 1 + r.IntN(5); j > 0; j-- {
					ins = append(ins, pick())
				}
			}
			if r.IntN(3) == 0 && len(lines) > 0 {
				end := min(pos+1+r.IntN(4), len(lines))
				lines = append(lines[:pos:pos], lines[end:]...)
			} else {
				lines = append(lines[:pos:pos], append(ins, lines[pos:]...)...)
			}
		}
		cases = append(cases, gitCase{name: fmt.Sprintf("i%04d.txt", i), old: old, new: []byte(strings.Join(lines, ""))})
	}
	return cases
}

// TestIndentHeuristicAgainstGit compares cases built to exercise the
// indent heuristic with git.
func TestIndentHeuristicAgainstGit(t *testing.T) {
	requireGit(t)
	n := 300
	if testing.Short() {
		n = 60
	}
	total := compareWithGit(t, indentCases(4, n), "", DefaultOptions(), nil)
	t.Logf("%d indent-heuristic cases compared with git", total)
}

// TestRandomAgainstGit compares a seeded random corpus of C-like edits
// with git, with the default hunk-header rule and with the cpp driver.
func TestRandomAgainstGit(t *testing.T) {
	requireGit(t)
	n := 400
	if testing.Short() {
		n = 100
	}
	cases := randomCases(1, n)
	total := compareWithGit(t, cases, "", DefaultOptions(), nil)
	total += compareWithGit(t, cases, "*.c diff=cpp\n", DefaultOptions(),
		func(string) FuncNameFunc { return CppFuncName })
	more := randomCases(2, n/2)
	total += compareWithGit(t, more, "", Options{Context: 0}, nil, "-U0")
	total += compareWithGit(t, more, "", Options{Context: 1}, nil, "-U1")
	t.Logf("%d random cases compared with git", total)
}

// TestHeavyAgainstGit compares large, heavily edited files with git.
func TestHeavyAgainstGit(t *testing.T) {
	requireGit(t)
	n := 24
	if testing.Short() {
		n = 6
	}
	total := compareWithGit(t, heavyCases(3, n), "", DefaultOptions(), nil)
	t.Logf("%d heavy cases compared with git", total)
}
