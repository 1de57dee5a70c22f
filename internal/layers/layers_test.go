// Package layers holds the test that kpatch's imports point down the
// pipeline, as docs/architecture.md draws it.
package layers

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// rows are kpatch's packages from the top of the pipeline down: a package
// may import the packages of the rows below its own. The plumbing row may
// import itself (Go refuses cycles). A package that is in no row fails the
// test: a new package takes its place here and in docs/architecture.md.
var rows = [][]string{
	{"cmd/kpatch", "internal/weave/reweave", "internal/weave/remessage"},
	{"verify"},
	{"verify/cunit"},
	{"buildtest"},
	{"boottest"},
	{"revision"},
	{"revision/trailers"},
	{"unwind/report"},
	{"unwind/core"},
	{"unwind/symtab"},
	{"unwind"},
	{"series"},
	{"series/hooks", "series/standin"},
	{"spec"},
	{"templates/linux"},
	{"plumbing/"},
	{"internal/ktypes", "internal/weave"},
}

// testSupport are imported by tests only.
var testSupport = []string{"internal/testenv", "internal/gittest", "internal/seriestest", "internal/oracle", "internal/smtpsink", "internal/layers"}

func rowOf(pkg string) int {
	for i, r := range rows {
		for _, p := range r {
			if pkg == p || strings.HasSuffix(p, "/") && strings.HasPrefix(pkg, p) {
				return i
			}
		}
	}
	return -1
}

func isTestSupport(pkg string) bool {
	for _, p := range testSupport {
		if pkg == p {
			return true
		}
	}
	return false
}

func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "kpatch/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		n++
		pkg := strings.TrimPrefix(p.ImportPath, "kpatch/")
		if strings.Contains(pkg, "/internal/") && strings.HasPrefix(pkg, "plumbing/") {
			pkg = "plumbing/" // a plumbing package's own internals
		}
		if isTestSupport(pkg) {
			continue
		}
		row := rowOf(pkg)
		if row < 0 {
			t.Errorf("%s is in no row of the pipeline: give it its place in rows and in docs/architecture.md", pkg)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, "kpatch/") {
				continue
			}
			dep := strings.TrimPrefix(imp, "kpatch/")
			if isTestSupport(dep) {
				t.Errorf("%s imports the test support package %s", pkg, dep)
				continue
			}
			r := rowOf(dep)
			switch {
			case r < 0:
				t.Errorf("%s imports %s, which is in no row", pkg, dep)
			case r < row || r == row && rows[row][0] != "plumbing/" && !strings.HasPrefix(dep, pkg+"/internal/"):
				t.Errorf("%s imports %s, which is not below it (row %d, its own %d)", pkg, dep, r, row)
			}
		}
	}
	if n < len(rows) {
		t.Fatalf("go list gave %d packages", n)
	}
}
