package buildtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"kpatch/plumbing/kbuild"
)

// Frame is one level of the inlined code at an address: the function and
// the source line, innermost first.
type Frame struct {
	Func string `json:"func"`
	File string `json:"file"` // relative to the source tree when inside it
	Line int    `json:"line"`
	// Patch is the patch that wrote the line (0: the base), at the step
	// the warning was found.
	Patch int `json:"patch"`
}

// String prints the frame as addr2line does: "file:line (func)".
func (f Frame) String() string {
	return fmt.Sprintf("%s:%d (%s)", f.File, f.Line, f.Func)
}

// objtoolAtRE reads the place of an objtool warning: "objtool:
// syscall_exit_to_user_mode+0xaa: call to ...".
var objtoolAtRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^objtool: ([A-Za-z0-9_.]+)\+0x([0-9a-f]+): `) })

// objtoolPlace returns the function and offset an objtool message names.
func objtoolPlace(msg string) (fn string, off uint64, ok bool) {
	m := objtoolAtRE().FindStringSubmatch(msg)
	if m == nil {
		return "", 0, false
	}
	off, err := strconv.ParseUint(m[2], 16, 64)
	return m[1], off, err == nil
}

// definingObject returns the object of the kernel (a member of
// vmlinux.a) that defines the text symbol fn, from nm's listing.
func definingObject(nmOutput []byte, fn string) string {
	sc := bufio.NewScanner(bytes.NewReader(nmOutput))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		// "vmlinux.a:kernel/entry/common.o:0000000000000000 T syscall_exit_to_user_mode"
		l := sc.Text()
		f := strings.Fields(l)
		if len(f) != 3 || f[2] != fn || (f[1] != "T" && f[1] != "t") {
			continue
		}
		parts := strings.Split(f[0], ":")
		if len(parts) >= 3 && strings.HasSuffix(parts[1], ".o") {
			return parts[1]
		}
	}
	return ""
}

// symbolPlace reads, from objdump -t of an object, the section and value
// of the function symbol fn.
func symbolPlace(objdumpT []byte, fn string) (section string, value uint64, ok bool) {
	for _, l := range strings.Split(string(objdumpT), "\n") {
		// "0000000000000000 g     F .noinstr.text\t00000000000000f5 syscall_exit_to_user_mode"
		f := strings.Fields(l)
		if len(f) < 4 || f[len(f)-1] != fn || !strings.Contains(l, " F ") {
			continue
		}
		v, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			continue
		}
		for i, w := range f {
			if w == "F" && i+1 < len(f) {
				return f[i+1], v, true
			}
		}
	}
	return "", 0, false
}

// inlineChain parses addr2line -f -i output: pairs of lines, function
// then file:line, innermost first.
func inlineChain(out []byte, rel func(string) string) []Frame {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var fr []Frame
	for i := 0; i+1 < len(lines); i += 2 {
		loc := lines[i+1]
		if j := strings.Index(loc, " (discriminator"); j >= 0 {
			loc = loc[:j]
		}
		file, line, ok := strings.Cut(loc, ":")
		if !ok || file == "??" {
			continue
		}
		n, _ := strconv.Atoi(line)
		fr = append(fr, Frame{Func: lines[i], File: rel(file), Line: n})
	}
	return fr
}

// traceObjtool finds the source lines of an objtool warning on vmlinux.o:
// the object that defines the function it names (nm on vmlinux.a) is
// compiled once more, with -g added to the command kbuild recorded for it
// and written elsewhere (gcc's code does not change with -g), and
// addr2line reads the inlined lines at the function's offset there. nil
// when any of it fails: the warning is reported without lines.
func (r *runner) traceObjtool(ctx context.Context, msg string) []Frame {
	fn, off, ok := objtoolPlace(msg)
	if !ok {
		return nil
	}
	tool := func(name string, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = r.d.Obj
		return cmd.Output()
	}
	nm, err := tool("nm", "-A", "--defined-only", "vmlinux.a")
	if err != nil {
		return nil
	}
	obj := definingObject(nm, fn)
	if obj == "" {
		return nil
	}
	cc, err := kbuild.ReadCompileCommand(r.d.Obj, obj)
	if err != nil {
		return nil
	}
	tmp, err := os.MkdirTemp(r.d.Root, "objtool-trace-")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, filepath.Base(obj))
	var args []string
	for i := 1; i < len(cc.Args); i++ {
		a := cc.Args[i]
		switch {
		case a == "-o" && i+1 < len(cc.Args):
			i++
			args = append(args, "-o", out)
		case strings.HasPrefix(a, "-Wp,-MMD,") || strings.HasPrefix(a, "-Wp,-MD,"):
		default:
			args = append(args, a)
		}
	}
	args = append(args, "-g")
	if _, err := tool(cc.Args[0], args...); err != nil {
		return nil
	}
	syms, err := tool("objdump", "-t", out)
	if err != nil {
		return nil
	}
	section, value, ok := symbolPlace(syms, fn)
	if !ok {
		return nil
	}
	lines, err := tool("addr2line", "-f", "-i", "-e", out, "-j", section, fmt.Sprintf("%#x", value+off))
	if err != nil {
		return nil
	}
	return inlineChain(lines, r.d.Rel)
}

// blameChain sets each frame's patch at step k and returns the origin of
// the outermost frame a patch wrote: the line that brought the code
// objtool complains about into the function it checks (a call in noinstr
// code such as unwind_reset_info() in exit_to_user_mode()). The inner
// frames keep their own patches: the instrumented access may have come
// later (a try_cmpxchg() in the function called), which is when a build
// of each patch first shows the warning.
func (st *steps) blameChain(fr []Frame, k int) (Origin, *Frame) {
	var best *Frame
	var bestOrigin Origin
	for i := range fr {
		o, ok := st.origin(fr[i].File, fr[i].Line, k)
		if !ok {
			continue
		}
		fr[i].Patch = o.Patch
		if o.Patch > 0 {
			best, bestOrigin = &fr[i], o // the frames go outwards
		}
	}
	return bestOrigin, best
}
