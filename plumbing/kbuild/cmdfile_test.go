package kbuild

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestParseCompileCommand reads the .cmd files kbuild wrote (testdata/cmd,
// see its README): the compiler command up to objtool, the wrapper left
// out, the quoted defines unquoted as sh would, and the source file.
func TestParseCompileCommand(t *testing.T) {
	for _, c := range []struct {
		file, object, src, first string
	}{
		{"fork.o.cmd", "kernel/fork.o", "/root/.cache/kpatch/linux-6.12/kernel/fork.c", "gcc"},
		{"icecc-fork.o.cmd", "kernel/fork.o", "/root/.cache/kpatch/farm-test/src/kernel/fork.c", "gcc"},
		{"stacktrace.o.cmd", "arch/x86/kernel/stacktrace.o", "/root/.cache/kpatch/linux-6.12/arch/x86/kernel/stacktrace.c", "gcc"},
	} {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "cmd", c.file))
			if err != nil {
				t.Fatal(err)
			}
			cmd, err := ParseCompileCommand(b, c.object)
			if err != nil {
				t.Fatal(err)
			}
			if cmd.Args[0] != c.first {
				t.Errorf("compiler %q, want %q (wrapper left out)", cmd.Args[0], c.first)
			}
			if cmd.Source != c.src {
				t.Errorf("source %q, want %q", cmd.Source, c.src)
			}
			if last := cmd.Args[len(cmd.Args)-1]; last != c.src {
				t.Errorf("last argument %q, want the source (objtool's command cut off)", last)
			}
			for _, a := range cmd.Args {
				if strings.Contains(a, "objtool") || a == ";" {
					t.Errorf("argument %q is objtool's", a)
				}
			}
			base := strings.TrimSuffix(filepath.Base(c.object), ".o")
			if want := `-DKBUILD_BASENAME="` + base + `"`; !slices.Contains(cmd.Args, want) {
				t.Errorf("no %s among %q", want, cmd.Args)
			}
			if !slices.Contains(cmd.Args, "-D__KERNEL__") || !slices.Contains(cmd.Args, "-nostdinc") {
				t.Errorf("kbuild's flags missing: %q", cmd.Args)
			}
		})
	}
	if _, err := ParseCompileCommand([]byte("source_x.o := x.c\n"), "x.o"); err == nil {
		t.Error("a .cmd file without savedcmd_ parsed")
	}
	// Lines are read as bufio.ScanLines reads them: a file copied with
	// CRLF line ends, or without a final newline, gives the same command.
	b, want := forkCommand(t)
	for name, v := range map[string][]byte{
		"CRLF":             bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")),
		"no final newline": bytes.TrimRight(b, "\n"),
	} {
		got, err := ParseCompileCommand(v, "kernel/fork.o")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !slices.Equal(got.Args, want.Args) || got.Source != want.Source {
			t.Errorf("%s: %q (%s), want %q (%s)", name, got.Args, got.Source, want.Args, want.Source)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`gcc -DX='"a b"' -c x.c`, []string{"gcc", `-DX="a b"`, "-c", "x.c"}},
		{`gcc "-DY=\"q\"" a\ b ; objtool x`, []string{"gcc", `-DY="q"`, "a b"}},
		{`gcc x.c && echo`, []string{"gcc", "x.c"}},
		{`  gcc   -O2  `, []string{"gcc", "-O2"}},
	} {
		got, err := SplitCommand(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := SplitCommand(`gcc '-DX`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

// TestPreprocess rewrites fork.o's real command for another file of the
// tree: -E in place of -c and -o, no dependency file, the overlay's
// directories before each of the tree's, the overlay's copy of a forced
// include, the module names of the file, its source directory for quoted
// includes, the file last.
func TestPreprocess(t *testing.T) {
	_, cmd := forkCommand(t)
	cmd.Dir = "/obj"
	src := "/root/.cache/kpatch/linux-6.12"
	ov := t.TempDir()
	// a forced include the overlay has (as a series that changed it would)
	if err := os.MkdirAll(filepath.Join(ov, "include/linux"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ov, "include/linux/kconfig.h"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	args := cmd.Preprocess(PreprocessOptions{SrcTree: src, Overlay: ov, Source: ov + "/kernel/unwind/deferred.c",
		Rel: "kernel/unwind/deferred.c", Output: "/tmp/x.i", KeepDefines: true, After: []string{ov + "/gen"}})
	joined := strings.Join(args, " ")
	for _, bad := range []string{" -c ", "-Wp,-MMD", "kernel/fork.o", "fork.c", `"fork"`} {
		if strings.Contains(joined, bad) {
			t.Errorf("%q left in %s", bad, joined)
		}
	}
	for _, want := range []string{
		"-I " + ov + "/include -I " + src + "/include ",
		"-I " + ov + "/arch/x86/include -I " + src + "/arch/x86/include ",
		"-I ./include ", // the object tree's generated headers stay as they are
		"-include " + ov + "/include/linux/kconfig.h ",
		"-include " + src + "/include/linux/compiler_types.h ",
		`-DKBUILD_BASENAME="deferred"`, `-DKBUILD_MODFILE="kernel/unwind/deferred"`, "-D__KBUILD_MODNAME=kmod_deferred",
		"-I " + ov + "/gen -iquote " + src + "/kernel/unwind -E -dD -o /tmp/x.i " + ov + "/kernel/unwind/deferred.c",
	} {
		if !strings.Contains(joined+" ", want) {
			t.Errorf("no %q in %s", want, joined)
		}
	}
	if !strings.HasSuffix(joined, ov+"/kernel/unwind/deferred.c") || args[0] != "gcc" {
		t.Errorf("the command is not gcc ... FILE: %s", joined)
	}
}

func TestCompiledSources(t *testing.T) {
	obj := t.TempDir()
	for _, f := range []string{"kernel/.fork.o.cmd", "kernel/.exit.o.cmd", "kernel/.bounds.s.cmd", "kernel/.x.mod.o.cmd", "kernel/unwind/.user.o.cmd"} {
		p := filepath.Join(obj, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	got := CompiledSources(obj, "kernel")
	if want := []string{"kernel/exit.o", "kernel/fork.o"}; !slices.Equal(got, want) {
		t.Errorf("CompiledSources = %q, want %q", got, want)
	}
}

// forkCommand returns testdata/cmd/fork.o.cmd (kbuild's .cmd file of
// kernel/fork.o) and the compile command parsed from it.
func forkCommand(t *testing.T) ([]byte, *CompileCommand) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cmd", "fork.o.cmd"))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := ParseCompileCommand(b, "kernel/fork.o")
	if err != nil {
		t.Fatal(err)
	}
	return b, cmd
}
