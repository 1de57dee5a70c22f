package selftest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"kpatch/qemu"
)

// Tool is a program the harness runs, directly or through the kernel's
// build, with the Debian package that provides it.
type Tool struct {
	Name    string // as looked up in $PATH
	Package string // the Debian package that provides it
	Why     string // what it is needed for ("to ...")
}

// BuildTools are the programs a build runs: git and tar unpack the base
// tree, make drives kbuild, gcc and binutils compile and link, flex and
// bison build Kconfig's parser, bc computes kernel/time's constants, awk
// generates the x86 instruction tables, and xz compresses the bzImage
// (tinyconfig selects KERNEL_XZ).
var BuildTools = []Tool{
	{"git", "git", "to read the base tree"},
	{"tar", "tar", "to unpack the base tree"},
	{"make", "make", "to run the kernel build"},
	{"gcc", "gcc", "to compile the kernel and the test programs"},
	{"ld", "binutils", "to link the kernel"},
	{"objcopy", "binutils", "to make the bzImage"},
	{"flex", "flex", "to build Kconfig's lexer"},
	{"bison", "bison", "to build Kconfig's parser"},
	{"bc", "bc", "to compute the kernel's time constants"},
	{"awk", "mawk", "to generate the x86 instruction tables"},
	{"xz", "xz-utils", "to compress the bzImage"},
}

// BootTools are the programs a boot runs.
var BootTools = []Tool{
	{qemu.DefaultBinary, "qemu-system-x86", "to boot the kernel"},
}

// compileChecks are what gcc must be able to build: the static 64-bit and
// 32-bit test programs and objtool, which includes libelf's header.
var compileChecks = []struct {
	tool  Tool
	flags []string
	src   string
}{
	{Tool{"gcc -m64 -static", "libc6-dev", "to build the 64-bit test programs"}, []string{"-m64", "-static"}, "int main(void) { return 0; }\n"},
	{Tool{"gcc -m32 -static", "gcc-multilib", "to build the 32-bit test programs"}, []string{"-m32", "-static"}, "int main(void) { return 0; }\n"},
	{Tool{"libelf's gelf.h", "libelf-dev", "to build objtool"}, []string{"-fsyntax-only"}, "#include <gelf.h>\nint main(void) { return 0; }\n"},
}

// MissingError lists the tools a run needs and does not find.
type MissingError struct {
	Missing []Tool
}

// Error names each missing tool with its Debian package and what needs it,
// and the command that installs them all, in one line.
func (e *MissingError) Error() string {
	var names, pkgs []string
	seen := map[string]bool{}
	for _, t := range e.Missing {
		names = append(names, fmt.Sprintf("%s %s (Debian package %s)", t.Name, t.Why, t.Package))
		if !seen[t.Package] {
			seen[t.Package] = true
			pkgs = append(pkgs, t.Package)
		}
	}
	return fmt.Sprintf("missing %s: apt-get install %s (or run scripts/setup.sh)",
		strings.Join(names, ", "), strings.Join(pkgs, " "))
}

// CheckTools returns a *MissingError naming every tool of BuildTools (and
// of BootTools if boot is set) that is not in $PATH, and every compile
// check that fails (a static -m64 or -m32 program, libelf's header), so
// that a run stops before it unpacks or builds anything.
func CheckTools(ctx context.Context, boot bool) error {
	tools := BuildTools
	if boot {
		tools = append(append([]Tool{}, BuildTools...), BootTools...)
	}
	var missing []Tool
	gcc := true
	for _, t := range tools {
		if _, err := exec.LookPath(t.Name); err != nil {
			missing = append(missing, t)
			if t.Name == "gcc" {
				gcc = false
			}
		}
	}
	if gcc {
		dir, err := os.MkdirTemp("", "kpatch-cc-check-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		for i, c := range compileChecks {
			src := filepath.Join(dir, fmt.Sprintf("t%d.c", i))
			if err := os.WriteFile(src, []byte(c.src), 0o644); err != nil {
				return err
			}
			args := append(append([]string{}, c.flags...), "-o", filepath.Join(dir, fmt.Sprintf("t%d", i)), src)
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			err := exec.CommandContext(cctx, "gcc", args...).Run()
			cancel()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				missing = append(missing, c.tool)
			}
		}
	}
	if len(missing) > 0 {
		return &MissingError{Missing: missing}
	}
	return nil
}
