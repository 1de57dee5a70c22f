package maintainers

import (
	"bytes"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// TestIndexAndPrefilterExact checks, on Debian 6.12's MAINTAINERS and a
// sample of its paths, that Sections (which scores only the sections its
// index leaves, and runs an N: regex only on paths containing its
// required literal) gives exactly what scoring every section with every
// regex gives.
func TestIndexAndPrefilterExact(t *testing.T) {
	tree := testenv.KernelTree(t)
	show := func(args ...string) []byte {
		out, err := exec.Command("git", append([]string{"-C", tree}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return out
	}
	f, err := Parse(bytes.NewReader(show("show", "v6.12:MAINTAINERS")))
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Split(strings.TrimSpace(string(show("ls-tree", "-r", "--name-only", "v6.12"))), "\n")
	var paths []string
	for i, p := range files {
		if i%40 == 0 {
			paths = append(paths, p)
		}
	}
	for _, c := range kernelCases {
		paths = append(paths, c...)
	}
	paths = append(paths, "README", "Makefile", "MAINTAINERS", "Kconfig", ".mailmap", "COPYING", "mt7921/x.c", "drivers/net/wireless/mediatek/mt76/mt7921/main.c")
	brute := func(path string) []*Section {
		saved := f.index
		defer func() { f.index = saved }()
		var out []*Section
		type hit struct {
			s     *Section
			score int
		}
		var hits []hit
		for _, s := range f.All {
			if score, ok := f.score(s, path); ok {
				hits = append(hits, hit{s, score})
			}
		}
		// The same stable order Sections uses.
		for len(hits) > 0 {
			best := 0
			for i, h := range hits {
				if h.score > hits[best].score {
					best = i
				}
			}
			out = append(out, hits[best].s)
			hits = append(hits[:best], hits[best+1:]...)
		}
		return out
	}
	// ParseLazy's File parses only the sections its index leaves, and
	// must find the same ones, parsed the same.
	lf, err := ParseLazy(show("show", "v6.12:MAINTAINERS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		got, want, lazy := f.Sections(p), brute(p), lf.Sections(p)
		if len(got) != len(want) || len(lazy) != len(want) {
			t.Errorf("%s: %d sections, lazily %d, scoring all gives %d", p, len(got), len(lazy), len(want))
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: section %d is %q, scoring all gives %q", p, i, got[i].Name, want[i].Name)
			}
			if lazy[i].Name != want[i].Name || lazy[i].Line != want[i].Line || !slices.Equal(lazy[i].Entries, want[i].Entries) {
				t.Errorf("%s: section %d is lazily %q at line %d, %q at line %d parsed whole", p, i, lazy[i].Name, lazy[i].Line, want[i].Name, want[i].Line)
			}
		}
	}
	// What gen asks (a few paths, MAINTAINERS among them) parses a
	// small part of the file.
	lf, err = ParseLazy(show("show", "v6.12:MAINTAINERS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"MAINTAINERS", "kernel/fork.c", "include/linux/sched.h", "arch/x86/Kconfig"} {
		lf.Sections(p)
	}
	if parsed := countParsed(lf); parsed == 0 || parsed*10 > len(f.All) {
		t.Errorf("the lazy File parsed %d of %d sections for 4 paths", parsed, len(f.All))
	}
	if lf.All != nil {
		t.Errorf("the lazy File has All")
	}
	n := 0
	for _, s := range f.All {
		for _, re := range s.regex {
			full := regexp.MustCompile(re.expr)
			for _, p := range paths {
				if re.MatchString(p) != full.MatchString(p) {
					t.Errorf("N: %s on %s: prefiltered %v, regexp %v", re.expr, p, re.MatchString(p), full.MatchString(p))
				}
			}
			n++
		}
	}
	if n < 50 || len(paths) < 1000 {
		t.Fatalf("only %d N: regexes and %d paths checked", n, len(paths))
	}
}

func TestRequiredLiteral(t *testing.T) {
	for expr, want := range map[string]string{
		"owl": "owl", "sun[x456789]i": "sun", "mt[2678]": "mt", "(?i)imx": "", "a|b": "",
		"[^a-z]tegra": "tegra", "foo?bar": "bar", "x(abc)y": "abc", "ab*": "a", "(?:omap|dra7)": "",
	} {
		n, err := newNameRegex(expr)
		if err != nil {
			t.Fatal(err)
		}
		if n.literal != want {
			t.Errorf("%q: required literal %q, want %q", expr, n.literal, want)
		}
	}
}

// countParsed returns how many sections of a File from ParseLazy are parsed.
func countParsed(f *File) int {
	n := 0
	for _, s := range f.lazy.parsed {
		if s != nil {
			n++
		}
	}
	return n
}
