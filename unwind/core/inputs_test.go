package core_test

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/unwind/core"
)

// Builds for the executable checks, besides those of realprog_test.go.
var (
	buildNoID    = build{"pie64-noid", []string{"-fPIE", "-pie", "-Wl,--build-id=none"}, ""}
	buildOther   = build{"other-pie", []string{"-fPIE", "-pie"}, "other.c"}
	buildOtherNo = build{"other-pie-noid", []string{"-fPIE", "-pie", "-Wl,--build-id=none"}, "other.c"}
)

// kpatchBinary is cmd/kpatch, built once per test binary run.
func kpatchBinary(t *testing.T) string {
	t.Helper()
	return testenv.KpatchBinary(t)
}

// runKpatch runs kpatch and returns its stdout, stderr and exit code.
func runKpatch(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(kpatchBinary(t), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// oneLine checks that stderr is exactly one line starting with prefix and
// holding every one of want.
func oneLine(t *testing.T, stderr, prefix string, want ...string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, prefix) {
		t.Errorf("stderr %q, want one line starting %q", stderr, prefix)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}
}

// A core cut short anywhere is refused on one line that names the part
// that is cut: for a segment its program header index, type and address,
// the file offsets it needs and the file's size, all as the complete
// core's program headers say.
func TestTruncatedRealCore(t *testing.T) {
	prog := program(t, builds[0])
	full, err := os.ReadFile(gcore(t, prog, []string{"recurse", "3"}))
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(full))
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside the last, the middle and the first segment holding bytes,
	// in the program headers, in the ELF header, and in the section
	// headers gdb writes at the end.
	var withBytes []int
	for i, p := range ef.Progs {
		if p.Filesz > 0 {
			withBytes = append(withBytes, i)
		}
	}
	type cut struct {
		name string
		size int64
	}
	mid := func(i int) int64 { p := ef.Progs[i]; return int64(p.Off + p.Filesz/2) }
	cuts := []cut{
		{"last segment", mid(withBytes[len(withBytes)-1])},
		{"a middle segment", mid(withBytes[len(withBytes)/2])},
		{"first segment", mid(withBytes[0])},
		{"program headers", 64 + 56 + 10},
		{"ELF header", 30},
		{"issue's size", 758384},
		{"section headers", int64(len(full)) - 1},
	}
	dir := t.TempDir()
	for _, c := range cuts {
		if c.size >= int64(len(full)) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".core")
			if err := os.WriteFile(path, full[:c.size], 0o644); err != nil {
				t.Fatal(err)
			}
			// What the complete core's headers say is cut: the segment
			// with the lowest offset that ends past the cut.
			var want []string
			seg, later := -1, 0
			for i, p := range ef.Progs {
				if p.Filesz > 0 && int64(p.Off+p.Filesz) > c.size {
					if seg < 0 || p.Off < ef.Progs[seg].Off {
						seg = i
					}
					later++
				}
			}
			switch {
			case c.size < 64:
				want = []string{"the ELF header needs file bytes 0x0-0x40"}
			case c.size < int64(64+56*len(ef.Progs)):
				want = []string{fmt.Sprintf("the program header table needs file bytes 0x40-%#x", 64+56*len(ef.Progs))}
			case seg >= 0:
				p := ef.Progs[seg]
				want = []string{fmt.Sprintf("segment %d (PT_LOAD at vaddr %#x) needs file bytes %#x-%#x", seg, p.Vaddr, p.Off, p.Off+p.Filesz)}
				if p.Type != elf.PT_LOAD {
					want = []string{fmt.Sprintf("segment %d (%v) needs", seg, p.Type)}
				}
				if later > 1 {
					want = append(want, fmt.Sprintf("and %d later segments are cut off too", later-1))
				}
			default:
				want = []string{"the section header table needs"}
			}
			want = append(want, fmt.Sprintf("but the file has %#x (%d bytes)", c.size, c.size), "dump the process again")
			stdout, stderr, code := runKpatch(t, "unwind", "--core", path, "--exe", prog)
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 (bad input, docs/cli.md) and nothing", code, stdout)
			}
			oneLine(t, stderr, "kpatch unwind: "+path+": core truncated: ", want...)
		})
	}
}

// An executable that is not the core's program is refused on one line (or,
// when the core holds too little to tell, a warning precedes the walk).
func TestCheckExe(t *testing.T) {
	if _, err := os.Stat("/bin/ls"); err != nil {
		t.Fatal(err)
	}
	type coreKind struct {
		b   build
		how string // gcore, kernel, or kernel-noheaders (coredump_filter 0x23: no ELF header pages)
	}
	tests := []struct {
		name string
		core coreKind
		exe  string // a build's name, or a path
		want string // "" when it matches; "warn: ..." for a warning
	}{
		{"same static", coreKind{builds[0], "gcore"}, "64", ""},
		{"same pie", coreKind{builds[2], "kernel"}, "pie64", ""},
		{"same 32", coreKind{builds[1], "gcore"}, "32", ""},
		{"same, no build ids", coreKind{buildNoID, "gcore"}, "pie64-noid", ""},
		{"same, no ELF headers in the core", coreKind{builds[2], "kernel-noheaders"}, "pie64", ""},
		{"a copy, no ELF headers in the core", coreKind{builds[2], "kernel-noheaders"}, "copy", ""},
		{"static for pie", coreKind{builds[2], "gcore"}, "64", "its build id is "},
		{"pie for static", coreKind{builds[0], "kernel"}, "pie64", "its build id is "},
		{"another pie", coreKind{builds[2], "gcore"}, "other-pie", "its build id is "},
		{"/bin/ls", coreKind{builds[2], "kernel"}, "/bin/ls", "its build id is "},
		{"32 for 64", coreKind{builds[0], "gcore"}, "32", "it is for EM_386, the core for EM_X86_64"},
		{"another pie, no build ids", coreKind{buildNoID, "gcore"}, "other-pie-noid", "neither has a build id, and its first "},
		{"a build id where the core has none", coreKind{buildNoID, "gcore"}, "pie64", "the core's program has none"},
		{"none where the core has one", coreKind{builds[2], "gcore"}, "pie64-noid", "it has no build id, the core's program has "},
		{"/bin/ls, no ELF headers in the core", coreKind{builds[2], "kernel-noheaders"}, "/bin/ls", "AT_ENTRY says"},
		{"static, no ELF headers in the core", coreKind{builds[2], "kernel-noheaders"}, "64", "its entry point is"},
		{"lookalike, no ELF headers in the core", coreKind{builds[2], "kernel-noheaders"}, "pie64-noid", "warn: cannot tell whether executable"},
	}
	all := map[string]build{}
	for _, b := range append(builds, buildNoID, buildOther, buildOtherNo) {
		all[b.name] = b
	}
	cores := map[string]string{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prog := program(t, tc.core.b)
			key := tc.core.b.name + "-" + tc.core.how
			corePath, ok := cores[key]
			if !ok {
				switch tc.core.how {
				case "gcore":
					corePath = gcore(t, prog, []string{"recurse", "2"})
				case "kernel":
					corePath = kernelCore(t, prog, []string{"recurse", "2"})
				case "kernel-noheaders":
					corePath = kernelCoreFiltered(t, prog, []string{"recurse", "2"}, "0x23")
				}
				// Keep the core beyond this subtest for the others.
				keep := filepath.Join(binDir, key+".core")
				if err := os.Rename(corePath, keep); err != nil {
					t.Fatal(err)
				}
				corePath = keep
				cores[key] = corePath
			}
			exe := tc.exe
			switch {
			case exe == "copy":
				exe = filepath.Join(t.TempDir(), "copy")
				data, err := os.ReadFile(prog)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(exe, data, 0o755); err != nil {
					t.Fatal(err)
				}
			case !strings.HasPrefix(exe, "/"):
				exe = program(t, all[exe])
			}
			c, err := core.Open(corePath)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tc.core.how == "kernel-noheaders" && c.BuildID() != "" {
				t.Fatalf("the core holds the build id %s despite coredump_filter 0x23", c.BuildID())
			}
			err = c.CheckExe(exe)
			var mis *core.ExeMismatchError
			var unsure *core.ExeUnverifiedError
			switch {
			case tc.want == "":
				if err != nil {
					t.Fatalf("CheckExe: %v", err)
				}
			case strings.HasPrefix(tc.want, "warn: "):
				if !errors.As(err, &unsure) || !strings.Contains(err.Error(), strings.TrimPrefix(tc.want, "warn: ")) {
					t.Fatalf("CheckExe: %v, want a warning saying %q", err, tc.want)
				}
			default:
				if !errors.As(err, &mis) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("CheckExe: %v, want a mismatch saying %q", err, tc.want)
				}
			}
			// The command: a match walks, a mismatch is one line and
			// exit 1 with nothing on stdout, a doubt a warning and the walk.
			stdout, stderr, code := runKpatch(t, "unwind", "--core", corePath, "--exe", exe)
			switch {
			case tc.want == "":
				if code != 0 || stderr != "" || !strings.Contains(stdout, " leaf+") {
					t.Errorf("exit %d, stderr %q, stdout %q; want the walk from leaf", code, stderr, stdout)
				}
			case unsure != nil:
				if code != 0 || !strings.Contains(stdout, " leaf+") {
					t.Errorf("exit %d, stdout %q; want the walk", code, stdout)
				}
				oneLine(t, stderr, "kpatch unwind: warning: cannot tell whether executable "+exe, "function names may be wrong")
			default:
				if code != 2 || stdout != "" {
					t.Errorf("exit %d, stdout %q; want 2 (bad input, docs/cli.md) and nothing", code, stdout)
				}
				oneLine(t, stderr, "kpatch unwind: --exe: executable "+exe+" is not the program of this core: ", tc.want, "give the program that dumped the core")
				if mis.CoreExe != prog || !strings.Contains(stderr, "("+prog+")") {
					t.Errorf("the error names %q as the core's program, want %s", mis.CoreExe, prog)
				}
			}
		})
	}
}

// --write-snapshot never writes over an input, by any name; it writes the
// snapshot whole or not at all.
func TestWriteSnapshotRefusesInputs(t *testing.T) {
	prog := program(t, builds[0])
	dir := t.TempDir()
	corePath := filepath.Join(dir, "c.core")
	if err := os.Rename(gcore(t, prog, []string{"recurse", "2"}), corePath); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "chain")
	data, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("c.core", filepath.Join(dir, "sym.core")))
	must(os.Link(corePath, filepath.Join(dir, "hard.core")))
	must(os.Symlink("chain", filepath.Join(dir, "exe-link")))
	sum := func(path string) [32]byte {
		b, err := os.ReadFile(path)
		must(err)
		return sha256.Sum256(b)
	}
	before, exeBefore := sum(corePath), sum(exe)
	tests := []struct {
		name, out, input string
	}{
		{"the core", corePath, ""},
		{"the core by another path", dir + "/./c.core", corePath},
		{"a symbolic link to the core", filepath.Join(dir, "sym.core"), corePath},
		{"a hard link to the core", filepath.Join(dir, "hard.core"), corePath},
		{"the executable", exe, ""},
		{"a link to the executable", filepath.Join(dir, "exe-link"), exe},
		{"a mapped file", prog, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runKpatch(t, "unwind", "--core", corePath, "--exe", exe, "--write-snapshot", tc.out)
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 (bad input, docs/cli.md) and nothing", code, stdout)
			}
			want := "is an input of this run"
			if tc.input != "" {
				want = "is the same file as the input " + tc.input
			}
			oneLine(t, stderr, "kpatch unwind: --write-snapshot: "+tc.out+" ", want, "refusing to write over it; choose another file")
		})
	}
	if sum(corePath) != before || sum(exe) != exeBefore {
		t.Fatal("an input changed")
	}
	// A snapshot is written, over an older one through a symbolic link,
	// atomically: the link stays, no temporary file is left behind, and
	// it walks as the core does.
	snap := filepath.Join(dir, "s.snap")
	must(os.WriteFile(snap, []byte("old\n"), 0o600))
	must(os.Symlink("s.snap", filepath.Join(dir, "s-link")))
	coreOut, stderr, code := runKpatch(t, "unwind", "--core", corePath, "--exe", exe, "--write-snapshot", filepath.Join(dir, "s-link"))
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "s-link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symbolic link was replaced: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(snap); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the snapshot's mode changed: %v", err)
	}
	snapOut, stderr, code := runKpatch(t, "unwind", "--snapshot", snap, "--exe", exe)
	if code != 0 || snapOut != coreOut {
		t.Errorf("the snapshot walks differently (exit %d, %s):\n%s\n%s", code, stderr, snapOut, coreOut)
	}
	entries, err := os.ReadDir(dir)
	must(err)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}
