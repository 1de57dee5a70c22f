package boottest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"kpatch/plumbing/qemu"
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

// gccChecks are what gcc must find besides itself: the static C
// libraries (and libgcc) of the -m64 and -m32 test programs, asked with
// -print-file-name, which answers a bare name when a file is missing, and
// libelf's header, which objtool includes. Asking costs a few milliseconds
// where compiling and linking a program would cost about a second.
var gccChecks = []struct {
	tool Tool
	args []string // a gcc command line; "-" reads gelfSource on stdin
	file bool     // gcc prints a file's path, which must exist
}{
	{Tool{"gcc -m64 -static", "libc6-dev", "to build the 64-bit test programs"}, []string{"-m64", "-print-file-name=libc.a"}, true},
	{Tool{"gcc -m32 -static", "gcc-multilib", "to build the 32-bit test programs"}, []string{"-m32", "-print-file-name=libc.a"}, true},
	{Tool{"gcc -m32 -static", "gcc-multilib", "to build the 32-bit test programs"}, []string{"-m32", "-print-libgcc-file-name"}, true},
	{Tool{"libelf's gelf.h", "libelf-dev", "to build objtool"}, []string{"-E", "-o", os.DevNull, "-x", "c", "-"}, false},
}

const gelfSource = "#include <gelf.h>\n"

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
// of BootTools if boot is set) that is not in $PATH, and what gcc cannot
// find (the static libraries of -m64 and -m32 programs, libelf's header),
// so that a run stops before it unpacks or builds anything.
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
		for _, c := range gccChecks {
			if len(missing) > 0 && missing[len(missing)-1] == c.tool {
				continue // the same tool failed its other check
			}
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			cmd := exec.CommandContext(cctx, "gcc", c.args...)
			cmd.Stdin = strings.NewReader(gelfSource)
			out, err := cmd.Output()
			cancel()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err == nil && c.file {
				p := strings.TrimSpace(string(out))
				if _, serr := os.Stat(p); !filepath.IsAbs(p) || serr != nil {
					err = fmt.Errorf("gcc %s: %q not found", strings.Join(c.args, " "), p)
				}
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
