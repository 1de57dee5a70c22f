package layers

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestErrorsCarryNoPackagePrefix: users know commands and files, not
// packages, so no error kpatch makes begins with the name of one of its
// packages ("kbuild: ..."), and nothing in the CLI has to strip such names.
// It reads the first argument of every fmt.Errorf and errors.New in the
// module's non-test sources.
func TestErrorsCarryNoPackagePrefix(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "kpatch/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		ImportPath, Name, Dir string
		GoFiles               []string
	}
	var pkgs []pkg
	names := map[string]bool{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
		names[p.Name] = true
		names[path.Base(p.ImportPath)] = true
	}
	delete(names, "main")
	calls := 0
	for _, p := range pkgs {
		for _, f := range p.GoFiles {
			file := filepath.Join(p.Dir, f)
			fset := token.NewFileSet()
			tree, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(tree, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				id, ok := sel.X.(*ast.Ident)
				if !ok || !(id.Name == "fmt" && sel.Sel.Name == "Errorf" || id.Name == "errors" && sel.Sel.Name == "New") {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				calls++
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				if i := strings.Index(s, ": "); i > 0 && names[s[:i]] {
					t.Errorf("%s: error begins with the package name %q: %q", fset.Position(lit.Pos()), s[:i], s)
				}
				return true
			})
		}
	}
	if calls < 100 {
		t.Fatalf("read %d error calls: the sources were not found", calls)
	}
}
