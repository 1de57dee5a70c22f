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
		{name: "header end", edit: spec.Edit{Path: "guard.h", Op: "header-end", Text: "int b;\n"},
			before: "#endif", after: ""},
		{name: "header end needs the guard's #endif last", edit: spec.Edit{Path: "other.c", Op: "header-end", Text: "x\n"},
			wantErr: ErrAnchorMissing},
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

// TestSortedPlacement places entries in lists that are sorted, sorted only
// in runs, unsorted and with duplicates (testdata/sorted): between the
// adjacent pair a < X < b nearest by name, with sentinels at both ends of
// the list, and the first such pair in the file on a tie.
func TestSortedPlacement(t *testing.T) {
	sel := func(config, text string) spec.Edit {
		return spec.Edit{Path: "sorted/Kconfig", Op: "select-sorted", Args: []string{config}, Text: text}
	}
	tests := []struct {
		name          string
		edit          spec.Edit
		above, below  string // the lines right above and right below the inserted text
		wantErr       error
		wantErrDetail string
	}{
		{name: "runs: between the neighbours by name, not before the first greater entry",
			edit:  sel("RUNS", "\tselect HAVE_UNWIND_USER_FP\t\tif X86_64\n"),
			above: "\tselect HAVE_UNSTABLE_SCHED_CLOCK", below: "\tselect HAVE_USER_RETURN_NOTIFIER"},
		{name: "runs: the tighter of two bracketing pairs",
			edit:  sel("RUNS", "\tselect HAVE_PERF_Z\n"),
			above: "\tselect HAVE_PERF_USER_STACK_DUMP", below: "\tselect MMU_GATHER_RCU_TABLE_FREE\tif PARAVIRT"},
		{name: "runs: before a stray entry near the end",
			edit:  sel("RUNS", "\tselect ZEA\n"),
			above: "\tselect IRQ_FORCED_THREADING", below: "\tselect ZED"},
		{name: "runs: first position",
			edit:  sel("RUNS", "\tselect AAA\n"),
			above: "\tdef_bool y", below: "\tselect ARCH_A"},
		{name: "runs: last position, before the help",
			edit:  sel("RUNS", "\tselect ZZZ\n"),
			above: "\tselect FUNCTION_ALIGNMENT_4B", below: "\thelp"},
		{name: "runs: already there", edit: sel("RUNS", "\tselect HAVE_GENERIC_VDSO\n"), wantErr: ErrAlreadyPresent, wantErrDetail: "line 16"},
		{name: "sorted: in the middle", edit: sel("SORTED", "\tselect C\n"), above: "\tselect B", below: "\tselect D"},
		{name: "sorted: before the entry below a comment, the comment stays with its entry",
			edit: sel("SORTED", "\tselect E\n"), above: "\tselect D", below: "\t# a comment inside the list"},
		{name: "sorted: last", edit: sel("SORTED", "\tselect G\n"), above: "\tselect F\t\t\t\tif G", below: ""},
		{name: "sorted: first", edit: sel("SORTED", "\tselect A\n"), above: "\tbool", below: "\tselect B"},
		{name: "unsorted: greater than all, at the end", edit: sel("UNSORTED", "\tselect CC\n"), above: "\tselect A", below: ""},
		{name: "unsorted: smaller than all, at the start", edit: sel("UNSORTED", "\tselect 0\n"), above: "\tbool", below: "\tselect C"},
		{name: "unsorted: no real pair brackets it, the end wins as A shares a prefix", edit: sel("UNSORTED", "\tselect AB\n"), above: "\tselect A", below: ""},
		{name: "unsorted: no real pair brackets it, a tie goes to the start", edit: sel("UNSORTED", "\tselect BB\n"), above: "\tbool", below: "\tselect C"},
		{name: "duplicates: between the last duplicate and the next",
			edit: sel("DUPS", "\tselect C\n"), above: "\tselect B", below: "\tselect D"},
		{name: "duplicates: greater than all, after the last entry",
			edit: sel("DUPS", "\tselect E\n"), above: "\tselect B", below: ""},
		{name: "duplicates: already there (the first)", edit: sel("DUPS", "\tselect B\n"), wantErr: ErrAlreadyPresent, wantErrDetail: "line 41"},
		{name: "tie: the first bracketing pair in the file",
			edit: sel("TIE", "\tselect C\n"), above: "\tselect A", below: "\tselect D"},
		{name: "no list", edit: sel("NONE", "\tselect A\n"), wantErr: ErrAnchorMissing},
		{name: "no such config", edit: sel("NOPE", "\tselect A\n"), wantErr: ErrAnchorMissing},

		{name: "section: in the sorted run, case-insensitively",
			edit:  spec.Edit{Path: "sorted/MAINTAINERS", Op: "section", Args: []string{"FOO"}, Text: "FOO\nM:\tF <f@example.org>\n\n"},
			above: "", below: "Gamma Driver"},
		{name: "section: first",
			edit:  spec.Edit{Path: "sorted/MAINTAINERS", Op: "section", Args: []string{"AAA"}, Text: "AAA\nM:\tA <a@example.org>\n\n"},
			above: "", below: "ALPHA DRIVER"},
		{name: "section: last, before THE REST",
			edit:  spec.Edit{Path: "sorted/MAINTAINERS", Op: "section", Args: []string{"ZETA"}, Text: "ZETA\nM:\tZ <z@example.org>\n\n"},
			above: "", below: "THE REST"},
		{name: "section: a tie between two runs goes to the first",
			edit:  spec.Edit{Path: "sorted/MAINTAINERS", Op: "section", Args: []string{"CHARLIE"}, Text: "CHARLIE\nM:\tC <c@example.org>\n\n"},
			above: "", below: "DELTA DRIVER"},
		{name: "section: already there, in another case",
			edit:    spec.Edit{Path: "sorted/MAINTAINERS", Op: "section", Args: []string{"GAMMA DRIVER"}, Text: "GAMMA DRIVER\n"},
			wantErr: ErrAlreadyPresent, wantErrDetail: "line 16"},

		{name: "sorted line: after a stray entry when that pair is the nearest",
			edit:  spec.Edit{Path: "sorted/Kbuild", Op: "sorted-line", Args: []string{"mandatory-y += "}, Text: "mandatory-y += dma.h\n"},
			above: "mandatory-y += device.h", below: "mandatory-y += unaligned.h"},
		{name: "sorted line: the run without the stray entry",
			edit:  spec.Edit{Path: "sorted/Kbuild", Op: "sorted-line", Args: []string{"mandatory-y += "}, Text: "mandatory-y += unwind_user.h\n"},
			above: "mandatory-y += unaligned.h", below: "mandatory-y += word-at-a-time.h"},
		{name: "sorted line: last",
			edit:  spec.Edit{Path: "sorted/Kbuild", Op: "sorted-line", Args: []string{"mandatory-y += "}, Text: "mandatory-y += zz.h\n"},
			above: "mandatory-y += xor.h", below: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := memFiles{}
			err := Apply(files, tt.edit)
			if tt.wantErr != nil {
				var ae *AnchorError
				if !errors.As(err, &ae) || !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want an *AnchorError matching %v", err, tt.wantErr)
				}
				if !strings.Contains(ae.Detail, tt.wantErrDetail) {
					t.Errorf("detail %q, want %q", ae.Detail, tt.wantErrDetail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			orig, err := os.ReadFile(filepath.Join("testdata", tt.edit.Path))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(string(files[tt.edit.Path]), "\n")
			text := strings.Split(strings.TrimSuffix(tt.edit.Text, "\n"), "\n")
			if want := len(strings.Split(string(orig), "\n")) + len(text); len(got) != want {
				t.Fatalf("%d lines after the edit, want %d", len(got), want)
			}
			at := 0 // the first line that differs from the original
			for ; at < len(got) && strings.HasPrefix(string(orig), strings.Join(got[:at+1], "\n")+"\n"); at++ {
			}
			if strings.Join(got[at:at+len(text)], "\n") != strings.Join(text, "\n") {
				t.Fatalf("the text is not inserted as one block at line %d:\n%s", at+1, files[tt.edit.Path])
			}
			above, below := "", ""
			if at > 0 {
				above = got[at-1]
			}
			if at+len(text) < len(got) {
				below = got[at+len(text)]
			}
			if above != tt.above || below != tt.below {
				t.Errorf("inserted between %q and %q, want between %q and %q", above, below, tt.above, tt.below)
			}
		})
	}
}

// TestPlaceSorted checks the rule itself on lists of keys.
func TestPlaceSorted(t *testing.T) {
	tests := []struct {
		list []string
		key  string
		want int // index of the entry it goes before; len(list) = at the end
		dup  int // index of the entry that has key, or -1
	}{
		{[]string{}, "A", 0, -1},
		{[]string{"B"}, "A", 0, -1},
		{[]string{"B"}, "C", 1, -1},
		{[]string{"B"}, "B", 0, 0},
		{[]string{"A", "C", "E"}, "D", 2, -1},
		{[]string{"A", "C", "E", "B", "D", "F"}, "DD", 5, -1},      // (C, E) and (D, F) have one entry between: D shares a prefix
		{[]string{"A", "C", "E", "B", "D", "F"}, "CC", 2, -1},      // C < CC: only (C, E) brackets it
		{[]string{"A", "C", "E", "B", "D", "F"}, "AA", 1, -1},      // only (A, C) brackets
		{[]string{"A", "C", "X", "Y", "B", "D", "E"}, "DD", 6, -1}, // (D, E): nothing between, (C, X) has D and E
		{[]string{"AB", "AD", "AC"}, "ACC", 3, -1},                 // (AC, end) has nothing after it; (AB, AD) has AC
		{[]string{"B", "D", "C"}, "A", 0, -1},
		{[]string{"C", "B", "A"}, "D", 3, -1},
		{[]string{"C", "B", "A"}, "0", 0, -1},
		{[]string{"A", "A", "C"}, "B", 2, -1},
		{[]string{"A", "B", "A"}, "A", 0, 0},
	}
	for _, tt := range tests {
		var es []entry
		for i, k := range tt.list {
			es = append(es, entry{k, 10 * i, 10 * i})
		}
		at, dup := placeSorted(es, tt.key, 10*len(tt.list))
		if dup != tt.dup || dup < 0 && at != 10*tt.want {
			t.Errorf("%q + %q: at %d dup %d, want at %d dup %d", tt.list, tt.key, at/10, dup, tt.want, tt.dup)
		}
	}
}

// shifted is a Files whose current content has one line more at the top
// than the base tree: BaseLine maps line n to n-1, and line 1 to none.
type shifted struct{ memFiles }

func (s shifted) BaseLine(path string, line int) (int, bool) { return line - 1, line > 1 }

// TestErrorLineNumbers checks that the lines an error names are numbered
// as the base tree numbers them when Files knows it, and as the file
// stands when it does not.
func TestErrorLineNumbers(t *testing.T) {
	tests := []struct {
		name   string
		files  Files
		edit   spec.Edit
		detail string
	}{
		{"ambiguous function, no base", memFiles{}, spec.Edit{Path: "code.c", Op: "after-function", Args: []string{"dup"}, Text: "x\n"},
			"2 definitions of dup(), at lines 27, 31"},
		{"ambiguous function, base numbers", shifted{memFiles{}}, spec.Edit{Path: "code.c", Op: "after-function", Args: []string{"dup"}, Text: "x\n"},
			"2 definitions of dup(), at lines 26, 30"},
		{"ambiguous line, base numbers", shifted{memFiles{"dup.c": []byte("added\nvoid f(void)\n{\n\tx();\n\tx();\n}\n")}},
			spec.Edit{Path: "dup.c", Op: "statement-before", Args: []string{"f", "x"}, Text: "y();\n"}, "lines 3, 4"},
		{"a line the series added", shifted{memFiles{"dup.c": []byte("#include <a.h>\n#include <a.h>\n")}},
			spec.Edit{Path: "dup.c", Op: "include-after", Args: []string{"<a.h>"}, Text: "#include <b.h>\n"}, "lines 1 (added by the series), 1"},
		{"already present, base numbers", shifted{memFiles{}}, spec.Edit{Path: "Kconfig", Op: "select-sorted", Args: []string{"X86"}, Text: "\tselect HAVE_B\n"},
			"line 12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Apply(tt.files, tt.edit)
			var ae *AnchorError
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want an *AnchorError", err)
			}
			if ae.Detail != tt.detail {
				t.Errorf("detail %q, want %q", ae.Detail, tt.detail)
			}
		})
	}
}

// TestCandidates checks the lines offered for a missing anchor.
func TestCandidates(t *testing.T) {
	tests := []struct {
		name  string
		files Files
		edit  spec.Edit
		want  []string // "LINE: TEXT", in order
	}{
		{"statement: the statements of the function most like it", memFiles{},
			spec.Edit{Path: "code.c", Op: "statement-before", Args: []string{"work", "prepar"}, Text: "x\n"},
			[]string{"19: \tprepare(t);"}},
		{"statement: a renamed call first", memFiles{"f.c": []byte("void f(void)\n{\n\tint a;\n\n\ttaskstats_exit2(tsk,\n\t\tgroup_dead);\n\tother(x);\n\tkcov_task_exit(tsk);\n}\n")},
			spec.Edit{Path: "f.c", Op: "statement-after", Args: []string{"f", "taskstats_exit"}, Text: "x\n"},
			[]string{"5: \ttaskstats_exit2(tsk,", "8: \tkcov_task_exit(tsk);"}},
		{"statement: the function missing, the functions most like it", memFiles{},
			spec.Edit{Path: "code.c", Op: "statement-before", Args: []string{"worker", "run"}, Text: "x\n"},
			[]string{"15: void work(struct task *t)"}},
		{"include: the includes of the file", memFiles{},
			spec.Edit{Path: "code.c", Op: "include-after", Args: []string{"<linux/zz.h>"}, Text: "x\n"},
			[]string{"1: #include <linux/a.h>", "2: #include <linux/b.h>"}},
		{"include: base numbers", shifted{memFiles{}},
			spec.Edit{Path: "code.c", Op: "include-after", Args: []string{"<linux/zz.h>"}, Text: "x\n"},
			[]string{"0: #include <linux/a.h>", "1: #include <linux/b.h>"}},
		{"Kconfig symbol: the symbols most like it", memFiles{},
			spec.Edit{Path: "Kconfig", Op: "config-after", Args: []string{"BETAX"}, Text: "x\n"},
			[]string{"5: config BETA"}},
		{"member: the members most like it", memFiles{},
			spec.Edit{Path: "code.c", Op: "member-before", Args: []string{"task", "threads"}, Text: "x\n"},
			[]string{"7: \tstruct thread\t\tthread;"}},
		{"function: the functions most like it", memFiles{},
			spec.Edit{Path: "code.c", Op: "after-function", Args: []string{"helpers"}, Text: "x\n"},
			[]string{"10: static int helper(int x)"}},
		{"move: the destination's functions when BEFORE is missing there", memFiles{},
			spec.Edit{Path: "code.c", Op: "move-function", Args: []string{"helper", "other.c", "get_flag", "global_helper"}},
			[]string{"3: static unsigned long get_flags(void)"}},
		{"line: the lines most like it", memFiles{},
			spec.Edit{Path: "code.c", Op: "line-after", Args: []string{"#include <linux/c.h>"}, Text: "x\n"},
			[]string{"1: #include <linux/a.h>"}},
		{"select list without selects: no candidates", memFiles{},
			spec.Edit{Path: "sorted/Kconfig", Op: "select-sorted", Args: []string{"NONE"}, Text: "\tselect A\n"}, nil},
		{"ambiguous: no candidates", memFiles{},
			spec.Edit{Path: "code.c", Op: "after-function", Args: []string{"dup"}, Text: "x\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Apply(tt.files, tt.edit)
			var ae *AnchorError
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want an *AnchorError", err)
			}
			var got []string
			for _, c := range ae.Candidates {
				if want := tt.edit.Path; c.File != want && (tt.edit.Op != "move-function" || c.File != tt.edit.Args[1]) {
					t.Errorf("candidate in %s, want %s", c.File, want)
				}
				got = append(got, fmt.Sprintf("%d: %s", c.Line, c.Text))
			}
			if len(got) < len(tt.want) || strings.Join(got[:len(tt.want)], "\n") != strings.Join(tt.want, "\n") || tt.want == nil && got != nil {
				t.Errorf("candidates:\n%s\nwant first:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestAdds checks which inserted texts provide which anchors.
func TestAdds(t *testing.T) {
	tests := []struct {
		text string
		edit spec.Edit
		want bool
	}{
		{"config UNWIND_USER\n\tbool\n", spec.Edit{Op: "config-after", Args: []string{"UNWIND_USER"}}, true},
		{"config UNWIND_USER_FP\n\tbool\n", spec.Edit{Op: "config-after", Args: []string{"UNWIND_USER"}}, false},
		{"#include <linux/a.h>\n", spec.Edit{Op: "include-before", Args: []string{"<linux/a.h>"}}, true},
		{"\tfoo(x);\n", spec.Edit{Op: "statement-after", Args: []string{"f", "foo"}}, true},
		{"\tfoobar(x);\n", spec.Edit{Op: "statement-after", Args: []string{"f", "foo"}}, false},
		{"static int f(void)\n{\n}\n", spec.Edit{Op: "statement-after", Args: []string{"f", "foo"}}, true},
		{"int f(void);\n", spec.Edit{Op: "after-function", Args: []string{"f"}}, false},
		{"\tint\t\tnew;\n", spec.Edit{Op: "member-before", Args: []string{"task", "new"}}, true},
		{"obj-y += x/\n", spec.Edit{Op: "line-after", Args: []string{"obj-y += x/"}}, true},
	}
	for _, tt := range tests {
		if got := Adds(tt.text, tt.edit); got != tt.want {
			t.Errorf("Adds(%q, %s %q) = %v, want %v", tt.text, tt.edit.Op, tt.edit.Args, got, tt.want)
		}
	}
}

// TestEditorMatchesApply places a sequence of edits on the same files with
// one Editor (which keeps each file split in lines between edits) and with
// Apply afresh each time: the files must come out byte-equal, including
// when a file is replaced behind the Editor's back between two edits, and
// after edits that rewrite a file (rename-calls, move-function).
func TestEditorMatchesApply(t *testing.T) {
	edits := []spec.Edit{
		{Path: "Kconfig", Op: "config-after", Args: []string{"ALPHA"}, Text: "config NEW\n\tbool\n\n"},
		{Path: "Kconfig", Op: "select-sorted", Args: []string{"X86"}, Text: "\tselect HAVE_C\n"},
		{Path: "Kconfig", Op: "config-after", Args: []string{"NEW"}, Text: "config NEWER\n\tbool\n\n"},
		{Path: "MAINTAINERS", Op: "section", Args: []string{"BETA DRIVER"}, Text: "BETA DRIVER\nM:\tB <b@example.org>\n\n"},
		{Path: "MAINTAINERS", Op: "section", Args: []string{"ZETA"}, Text: "ZETA\nM:\tZ <z@example.org>\n\n"},
		{Path: "code.c", Op: "include-after", Args: []string{"<linux/a.h>"}, Text: "#include <linux/new.h>\n"},
		{Path: "code.c", Op: "statement-before", Args: []string{"work", "r = run"}, Text: "\tnew(t);\n"},
		{Path: "code.c", Op: "rename-calls", Args: []string{"run", "go_run"}},
		{Path: "code.c", Op: "include-after", Args: []string{"<linux/new.h>"}, Text: "#include <linux/newer.h>\n"},
		{Path: "code.c", Op: "move-function", Args: []string{"helper", "other.c", "get_flags", "global_helper"}},
		{Path: "other.c", Op: "statement-before", Args: []string{"global_helper", "return x"}, Text: "\tnew(t);\n"},
		{Path: "code.c", Op: "after-function", Args: []string{"work"}, Text: "int decl(void);\n\n"},
		{Path: "guard.h", Op: "header-end", Text: "int b;\n"},
		{Path: "guard.h", Op: "header-end", Text: "int c; /* no newline */"},
	}
	const replaceAfter = 1 // Kconfig is replaced after this edit
	viaEditor, viaApply := memFiles{}, memFiles{}
	ed := NewEditor(viaEditor)
	for i, e := range edits {
		if err := ed.Apply(e); err != nil {
			t.Fatalf("Editor, edit %d: %v", i, err)
		}
		if err := Apply(viaApply, e); err != nil {
			t.Fatalf("Apply, edit %d: %v", i, err)
		}
		if i == replaceAfter {
			for _, m := range []memFiles{viaEditor, viaApply} {
				c, _ := m.Get("Kconfig")
				m.Set("Kconfig", append([]byte("# replaced\n"), c...))
			}
		}
	}
	for p, want := range viaApply {
		if got := viaEditor[p]; string(got) != string(want) {
			t.Errorf("%s differs:\n--- Editor\n%s--- Apply\n%s", p, got, want)
		}
	}
	if !strings.Contains(string(viaEditor["Kconfig"]), "# replaced\n") || !strings.Contains(string(viaEditor["other.c"]), "global_helper(") {
		t.Errorf("edits missing:\n%s\n%s", viaEditor["Kconfig"], viaEditor["other.c"])
	}
}
