package verify

import (
	"context"
	"strings"
	"sync"
	"testing"

	"kpatch/internal/oracle"
	"kpatch/internal/seriestest"
	"kpatch/internal/testenv"
	"kpatch/series"
	"kpatch/spec"
	"kpatch/templates/linux"
)

// debianTree returns the cached Debian 6.12 tree, creating it once.
func debianTree(t testing.TB) string {
	t.Helper()
	return testenv.KernelTree(t)
}

// generate generates v11 (or the spec in specDir) on Debian 6.12.
func generate(t testing.TB, specDir string) *Series {
	t.Helper()
	g, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: debianTree(t), Base: "v6.12", Version: 11, SpecDir: specDir})
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromGenerated(g)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	v11Once    sync.Once
	v11        *Series
	v11GenOnce sync.Once
	v11Gen     *series.Series
	v11GenErr  error
)

// v11Generated is v11 generated on Debian 6.12, shared by the tests (Run
// does not change a Series).
func v11Generated(t testing.TB) *Series {
	v11Once.Do(func() {
		s, err := FromGenerated(v11Generator(t))
		if err != nil {
			t.Fatal(err)
		}
		v11 = s
	})
	if v11 == nil {
		t.Fatal("v11 generation failed earlier")
	}
	return v11
}

// v11Generator is the generator's v11 on Debian 6.12 (its messages, its
// tree), generated once for the tests that read it (they only read it).
func v11Generator(t testing.TB) *series.Series {
	t.Helper()
	v11GenOnce.Do(func() {
		v11Gen, v11GenErr = seriestest.Generate(context.Background(), seriestest.Options{Tree: debianTree(t), Base: "v6.12", Version: 11})
	})
	if v11GenErr != nil {
		t.Fatal(v11GenErr)
	}
	return v11Gen
}

// seed reads the posted v11 thread, without a tree.
func seed(t testing.TB) *Series {
	t.Helper()
	p, err := oracle.SeedPath()
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadMail(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// textAt returns the line a finding points at: a line of the file in the
// tree after the finding's patch, or of the patch's mail.
func textAt(s *Series, f Finding) (string, bool) {
	p := s.Patch(f.Patch)
	if p == nil || f.Line == 0 {
		return "", false
	}
	if f.File == p.MailFile {
		lines := strings.Split(p.Mail, "\n")
		i := f.Line - p.MailLine
		if i < 0 || i >= len(lines) {
			return "", false
		}
		return lines[i], true
	}
	c, ok := s.FileAt(f.File, f.Patch)
	if !ok {
		for _, fl := range p.Files { // hunk only: the added lines
			if fl.Path == f.File {
				for _, l := range fl.Added {
					if l.N == f.Line {
						return l.Text, true
					}
				}
			}
		}
		return "", false
	}
	lines := strings.Split(string(c), "\n")
	if f.Line > len(lines) {
		return "", false
	}
	return lines[f.Line-1], true
}

func only(fs []Finding, id string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out
}

// seriesOpts checks with the rules the built-in spec declares for this
// series (templates/linux/verify-rules), as kpatch verify does.
func seriesOpts(t testing.TB) Options {
	t.Helper()
	return Options{Series: builtinSeriesRules(t)}
}

// builtinSeriesRules returns the rules the built-in spec declares.
func builtinSeriesRules(t testing.TB) *SeriesRules {
	t.Helper()
	sp, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewSeriesRules(sp.VerifyRules)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// testChecker is a checker of rule on s, as Run makes one (without build
// trees).
func testChecker(t testing.TB, s *Series, rule Rule) *checker {
	t.Helper()
	s.index()
	r, err := s.newReader(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return &checker{s: s, rule: rule, units: r, evals: &evalSet{m: map[string]Finding{}}, ignore: map[string]bool{},
		seen: map[string]bool{}, ctx: context.Background()}
}
