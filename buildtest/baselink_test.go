package buildtest

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kpatch/plumbing/objcode"
)

func TestParseLinkCommand(t *testing.T) {
	tests := []struct {
		name, saved string
		archives    []string
		objtool     []string
		err         string
	}{
		{"kcsan", "ld -m elf_x86_64 -z noexecstack --no-warn-rwx-segments -r -o vmlinux.o   --whole-archive vmlinux.a --no-whole-archive --start-group lib/lib.a arch/x86/lib/lib.a --end-group  ; ./tools/objtool/objtool --noinstr  --link vmlinux.o",
			[]string{"vmlinux.a", "lib/lib.a", "arch/x86/lib/lib.a"}, []string{"./tools/objtool/objtool", "--noinstr", "--link", "vmlinux.o"}, ""},
		{"ibt", "ld -m elf_x86_64 -r -o vmlinux.o --whole-archive vmlinux.a --no-whole-archive --start-group lib/lib.a --end-group ; ./tools/objtool/objtool --hacks=jump_label --hacks=noinstr --ibt --orc --retpoline --rethunk --static-call --uaccess --prefix=16 --noinstr --link vmlinux.o",
			[]string{"vmlinux.a", "lib/lib.a"}, nil, ""},
		{"no objtool", "ld -m elf_x86_64 -r -o vmlinux.o --whole-archive vmlinux.a --no-whole-archive", nil, nil, "does not run objtool"},
		{"shell", "ld -r -o vmlinux.o vmlinux.a ; ./tools/objtool/objtool $(x) vmlinux.o", nil, nil, "more than two plain commands"},
		{"other output", "ld -r -o other.o vmlinux.a ; ./tools/objtool/objtool --link vmlinux.o", nil, nil, "does not link archives"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lc, err := parseLinkCommand(tt.saved)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(lc.archives, tt.archives) {
				t.Errorf("archives = %q, want %q", lc.archives, tt.archives)
			}
			if tt.objtool != nil && !reflect.DeepEqual(lc.objtool, tt.objtool) {
				t.Errorf("objtool = %q, want %q", lc.objtool, tt.objtool)
			}
		})
	}
}

// compileCone compiles testdata/cone's C files named into objects in a
// temporary directory, with gcc as the kernel's objects are (-O2, no PIC).
func compileCone(t *testing.T, names ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Fatal("gcc is needed: it is a test dependency (scripts/install-deps.sh)")
	}
	dir := t.TempDir()
	for _, n := range names {
		src, _ := filepath.Abs(filepath.Join("testdata", "cone", n+".c"))
		out, err := exec.Command("gcc", "-O2", "-fno-pic", "-fno-asynchronous-unwind-tables", "-c", src, "-o", filepath.Join(dir, n+".o")).CombinedOutput()
		if err != nil {
			t.Fatalf("gcc %s: %v\n%s", n, err, out)
		}
	}
	return dir
}

// The cone of root (testdata/cone/a.c): its own object, every object of a
// function it calls or jumps to, and, for a callee with no return of its
// own, the objects of what it tail-calls — not what a returning callee
// calls. A callee no object defines, or only weakly, is not settled.
func TestLinkCone(t *testing.T) {
	dir := compileCone(t, "a", "b", "c", "d", "e", "weak")
	tests := []struct {
		name    string
		members []string
		want    []string
		err     string
	}{
		{"cone", []string{"a.o", "b.o", "c.o", "d.o", "e.o"}, []string{"a.o", "b.o", "d.o", "e.o"}, ""},
		{"weak overridden", []string{"weak.o", "a.o", "b.o", "c.o", "d.o", "e.o"}, []string{"a.o", "b.o", "d.o", "e.o"}, ""},
		{"only weak", []string{"weak.o", "a.o", "c.o", "d.o", "e.o"}, nil, "weak definition"},
		{"dead end missing", []string{"a.o", "b.o", "c.o", "d.o"}, nil, "last, which d.o calls, is defined by no object"},
		{"root missing", []string{"b.o", "c.o"}, nil, "root is defined by no object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := &linkSet{members: tt.members, file: func(m string) string { return filepath.Join(dir, m) },
				objs: map[string]*objcode.Object{}, objdump: func(p string) ([]byte, error) {
					return exec.Command("objdump", "-dr", "--no-show-raw-insn", p).Output()
				}}
			err := ls.index()
			var need map[string]bool
			if err == nil {
				need, err = ls.cone([]string{"root"})
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sortedKeys(need); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("cone = %q, want %q", got, tt.want)
			}
		})
	}
}
