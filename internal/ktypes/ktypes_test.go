package ktypes

import (
	"sort"
	"strings"
	"testing"

	"modernc.org/cc/v4"
)

// TestTypes: cc/v4 translates Types on both ABIs the checks use, with the
// kernel's sizes, and Names lists exactly the typedefs it declares.
func TestTypes(t *testing.T) {
	for _, c := range []struct {
		arch  string
		sizes map[string]int64
	}{
		{"amd64", map[string]int64{"size_t": 8, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "s32": 4, "u32": 4, "s64": 8, "u64": 8, "bool": 1}},
		{"386", map[string]int64{"size_t": 4, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "s32": 4, "u32": 4, "s64": 8, "u64": 8, "bool": 1}},
	} {
		t.Run(c.arch, func(t *testing.T) {
			abi, err := cc.NewABI("linux", c.arch)
			if err != nil {
				t.Fatal(err)
			}
			cfg := &cc.Config{ABI: abi}
			ast, err := cc.Translate(cfg, []cc.Source{{Name: "<types>", Value: "int __predefined_declarator;\n" + Types +
				"int f = false, tr = true;\n"}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for l := ast.TranslationUnit; l != nil; l = l.TranslationUnit {
				ed := l.ExternalDeclaration
				if ed == nil || ed.Case != cc.ExternalDeclarationDecl || ed.Declaration == nil {
					continue
				}
				for il := ed.Declaration.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
					d := il.InitDeclarator.Declarator
					if !d.IsTypename() {
						continue
					}
					got = append(got, d.Name())
					if size, want := d.Type().Size(), c.sizes[d.Name()]; size != want {
						t.Errorf("sizeof(%s) = %d, want %d", d.Name(), size, want)
					}
				}
			}
			want := append([]string(nil), Names...)
			sort.Strings(got)
			sort.Strings(want)
			if len(got) != len(want) {
				t.Fatalf("typedefs %v, Names %v", got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("typedefs %v, Names %v", got, want)
					break
				}
			}
		})
	}
}

// TestPrelude: the shared prelude is a translation unit cc/v4 accepts on
// both ABIs, with the annotations gone, noinstr and __always_inline kept
// as attributes only when asked, and the types sized for the ABI.
func TestPrelude(t *testing.T) {
	for _, keep := range []bool{false, true} {
		src := Prelude(keep) + "static __always_inline noinstr int f(u64 __user *p) { return likely(p != 0); }\n"
		for _, arch := range []string{"amd64", "386"} {
			abi, err := cc.NewABI("linux", arch)
			if err != nil {
				t.Fatal(err)
			}
			cfg := &cc.Config{ABI: abi}
			if err := cfg.ApplyOptions(); err != nil {
				t.Fatal(err)
			}
			if _, err := cc.Translate(cfg, []cc.Source{{Name: "p.c", Value: src}}); err != nil {
				t.Errorf("keep %v, %s: %v", keep, arch, err)
			}
		}
		if got := strings.Contains(Prelude(keep), `".noinstr.text"`); got != keep {
			t.Errorf("keep %v: noinstr as its section: %v", keep, got)
		}
	}
}
