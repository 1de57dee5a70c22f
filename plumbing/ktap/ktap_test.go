package ktap

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .golden files in testdata")

// dump prints a test tree in a stable text form for the golden files.
func dump(b *strings.Builder, t *Test, depth int) {
	pad := strings.Repeat("  ", depth)
	fmt.Fprintf(b, "%s%q #%d %s line=%d expected=%d", pad, t.Name, t.Number, t.Status, t.Line, t.Expected)
	if t.Directive != "" {
		fmt.Fprintf(b, " directive=%q", t.Directive)
	}
	b.WriteString("\n")
	for _, l := range t.Log {
		fmt.Fprintf(b, "%s  log %d: %s\n", pad, l.N, l.Text)
	}
	for _, p := range t.Problems {
		fmt.Fprintf(b, "%s  problem: %s\n", pad, p)
	}
	for _, s := range t.Subtests {
		dump(b, s, depth+1)
	}
}

func TestGolden(t *testing.T) {
	tests := []struct {
		log                        string
		pass, fail, skip, none, pb int
	}{
		{"nested-pass.log", 3, 0, 0, 0, 0},
		{"crash.log", 2, 0, 0, 1, 3},
		{"skip-fail.log", 1, 1, 2, 0, 0},
		{"bad-numbers.log", 2, 0, 0, 0, 3},
		{"prefixed.log", 1, 0, 0, 0, 0},
		{"empty.log", 0, 0, 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.log, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.log))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			root, err := Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			dump(&b, root, 0)
			golden := filepath.Join("testdata", strings.TrimSuffix(tc.log, ".log")+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != string(want) {
				t.Errorf("tree differs from %s:\n--- got\n%s--- want\n%s", golden, b.String(), want)
			}
			p, fl, s, n := root.Counts()
			if p != tc.pass || fl != tc.fail || s != tc.skip || n != tc.none {
				t.Errorf("Counts = %d/%d/%d/%d, want %d/%d/%d/%d", p, fl, s, n, tc.pass, tc.fail, tc.skip, tc.none)
			}
			if got := root.ProblemCount(); got != tc.pb {
				t.Errorf("ProblemCount = %d, want %d", got, tc.pb)
			}
		})
	}
}

func TestFind(t *testing.T) {
	root, err := Parse(strings.NewReader("KTAP version 1\n1..1\n  KTAP version 1\n  1..1\n  ok 1 leaf\nok 1 top\n"))
	if err != nil {
		t.Fatal(err)
	}
	if root.Find("leaf") == nil || root.Find("top") == nil || root.Find("nope") != nil {
		t.Errorf("Find misbehaves on %+v", root)
	}
}
