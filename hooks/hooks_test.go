package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/spec"
)

// memFiles is a Files over testdata, with edits kept in memory.
type memFiles map[string][]byte

func (m memFiles) Get(p string) ([]byte, error) {
	if c, ok := m[p]; ok {
		return c, nil
	}
	c, err := os.ReadFile(filepath.Join("testdata", p))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	m[p] = c
	return c, nil
}

func (m memFiles) Set(p string, c []byte) { m[p] = c }

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		edit    spec.Edit
		file    string // the file to check after the edit ("" = edit.Path)
		before  string // the inserted text must stand right before this line
		after   string // ... and right after this line
		absent  string // text that must be gone
		wantErr error
	}{
		{name: "config after a symbol", edit: spec.Edit{Path: "Kconfig", Op: "config-after", Args: []string{"ALPHA"}, Text: "config NEW\n\tbool\n\n"},
			before: "# The beta option.", after: ""},
		{name: "config after a symbol with help", edit: spec.Edit{Path: "Kconfig", Op: "config-after", Args: []string{"BETA"}, Text: "config NEW\n\tbool\n\n"},
			before: "config X86", after: ""},
		{name: "select in sorted order", edit: spec.Edit{Path: "Kconfig", Op: "select-sorted", Args: []string{"X86"}, Text: "\tselect HAVE_C\n"},
			before: "\tselect HAVE_D\t\tif X86_64", after: "\tselect HAVE_B"},
		{name: "select sorted before the first", edit: spec.Edit{Path: "Kconfig", Op: "select-sorted", Args: []string{"X86"}, Text: "\tselect AAA\n"},
			before: "\tselect ARCH_A", after: "\tdef_bool y"},
		{name: "select already there", edit: spec.Edit{Path: "Kconfig", Op: "select-sorted", Args: []string{"X86"}, Text: "\tselect HAVE_B\n"},
			wantErr: ErrAlreadyPresent},
		{name: "config symbol missing", edit: spec.Edit{Path: "Kconfig", Op: "config-after", Args: []string{"NOPE"}, Text: "x\n"},
			wantErr: ErrAnchorMissing},
		{name: "maintainers section sorted", edit: spec.Edit{Path: "MAINTAINERS", Op: "section", Args: []string{"BETA DRIVER"}, Text: "BETA DRIVER\nM:\tB <b@example.org>\n\n"},
			before: "GAMMA DRIVER", after: ""},
		{name: "maintainers section last before THE REST", edit: spec.Edit{Path: "MAINTAINERS", Op: "section", Args: []string{"ZETA"}, Text: "ZETA\nM:\tZ <z@example.org>\n\n"},
			before: "THE REST", after: ""},
		{name: "maintainers section exists", edit: spec.Edit{Path: "MAINTAINERS", Op: "section", Args: []string{"GAMMA DRIVER"}, Text: "GAMMA DRIVER\n"},
			wantErr: ErrAlreadyPresent},
		{name: "include after", edit: spec.Edit{Path: "code.c", Op: "include-after", Args: []string{"<linux/a.h>"}, Text: "#include <linux/new.h>\n"},
			before: "#include <linux/b.h>", after: "#include <linux/a.h>"},
		{name: "include before", edit: spec.Edit{Path: "code.c", Op: "include-before", Args: []string{"<linux/b.h>"}, Text: "#include <linux/new.h>\n"},
			before: "#include <linux/b.h>", after: "#include <linux/a.h>"},
		{name: "include missing", edit: spec.Edit{Path: "code.c", Op: "include-after", Args: []string{"<linux/zz.h>"}, Text: "x\n"},
			wantErr: ErrAnchorMissing},
		{name: "member before, with its comment", edit: spec.Edit{Path: "code.c", Op: "member-before", Args: []string{"task", "thread"}, Text: "\tint\t\t\tnew;\n"},
			before: "\t/* The thread: */", after: "\tint\t\t\ta;"},
		{name: "statement before a prefix, with its comment", edit: spec.Edit{Path: "code.c", Op: "statement-before", Args: []string{"work", "r = run"}, Text: "\tnew(t);\n"},
			before: "\t/* now run it */", after: "\tprepare(t);"},
		{name: "statement before a call", edit: spec.Edit{Path: "code.c", Op: "statement-before", Args: []string{"work", "finish"}, Text: "\tnew(t);\n"},
			before: "\tfinish(t);", after: "\tr = run(t, 1);"},
		{name: "statement after a call", edit: spec.Edit{Path: "code.c", Op: "statement-after", Args: []string{"work", "prepare"}, Text: "\tnew(t);\n"},
			before: "\t/* now run it */", after: "\tprepare(t);"},
		{name: "statement missing in function", edit: spec.Edit{Path: "code.c", Op: "statement-before", Args: []string{"helper", "run"}, Text: "x\n"},
			wantErr: ErrAnchorMissing},
		{name: "function defined twice", edit: spec.Edit{Path: "code.c", Op: "after-function", Args: []string{"dup"}, Text: "x\n"},
			wantErr: ErrAnchorAmbiguous},
		{name: "declaration is not a definition", edit: spec.Edit{Path: "code.c", Op: "after-function", Args: []string{"unused_twice"}, Text: "x\n"},
			wantErr: ErrAnchorMissing},
		{name: "after function", edit: spec.Edit{Path: "code.c", Op: "after-function", Args: []string{"helper"}, Text: "int decl(void);\n\n"},
			before: "void work(struct task *t)", after: ""},
		{name: "line after", edit: spec.Edit{Path: "code.c", Op: "line-after", Args: []string{"#include <linux/b.h>"}, Text: "#define X 1\n"},
			before: "", after: "#include <linux/b.h>"},
		{name: "rename calls", edit: spec.Edit{Path: "code.c", Op: "rename-calls", Args: []string{"run", "go_run"}},
			absent: " run(", before: "\tfinish(t);", after: "\tr = go_run(t, 1);"},
		{name: "move function", edit: spec.Edit{Path: "code.c", Op: "move-function", Args: []string{"helper", "other.c", "get_flags", "global_helper"}},
			file: "other.c", before: "static unsigned long get_flags(void)", after: ""},
		{name: "unknown operation", edit: spec.Edit{Path: "code.c", Op: "frobnicate", Args: []string{"x"}}, wantErr: errors.New("")},
		{name: "wrong number of arguments", edit: spec.Edit{Path: "code.c", Op: "statement-after", Args: []string{"work"}}, wantErr: errors.New("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := memFiles{}
			err := Apply(files, tt.edit)
			if tt.wantErr != nil {
				var ae *AnchorError
				if err == nil || !errors.As(err, &ae) {
					t.Fatalf("got %v, want an *AnchorError", err)
				}
				if tt.wantErr.Error() != "" && !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.edit.Path) || !strings.Contains(err.Error(), tt.edit.Op) {
					t.Errorf("error %q does not name the file and the anchor", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			path := tt.file
			if path == "" {
				path = tt.edit.Path
			}
			got := string(files[path])
			text := tt.edit.Text
			if tt.edit.Op == "move-function" {
				text = "int global_helper(int x)\n{\n\treturn x;\n}\n\n"
				if strings.Contains(string(files["code.c"]), "helper(") {
					t.Errorf("the function is still in code.c:\n%s", files["code.c"])
				}
			}
			if tt.edit.Op == "rename-calls" {
				text = ""
			}
			if tt.absent != "" && strings.Contains(got, tt.absent) {
				t.Errorf("%q is still there:\n%s", tt.absent, got)
			}
			want := text + tt.before
			if tt.before != "" && !strings.Contains(got, want) {
				t.Errorf("inserted text is not right before %q:\n%s", tt.before, got)
			}
			if tt.after != "" && !strings.Contains(got, tt.after+"\n"+text) {
				t.Errorf("inserted text is not right after %q:\n%s", tt.after, got)
			}
		})
	}
}
