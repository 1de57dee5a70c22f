package buildtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"kpatch/plumbing/kbuild"
)

// The checks beside the configurations: columns of the table whose cells
// hold warnings on the lines the series adds only.
const (
	// CheckW2 compiles, in the first configuration built with gcc, the
	// objects of the files the series touches with W=2's warnings (the
	// -Wshadow, -Wtype-limits class that W=1 leaves off).
	CheckW2 = "W=2"
	// CheckKernelDoc runs scripts/kernel-doc -Wall on the files the series
	// creates.
	CheckKernelDoc = "kernel-doc"
)

// w2Flags reads, from the tree's scripts/Makefile.extrawarn, what W=2
// changes in the compiler's flags: the flags of the block
// `ifneq ($(findstring 2, $(KBUILD_EXTRA_WARN)),)` are added, those of its
// else branch (the -Wno-... that keep W=2's warnings off otherwise)
// removed. Conditional lines inside (ifdef CONFIG_CC_IS_CLANG) are taken
// for both compilers: a flag the compiler does not know is removed or
// added to no effect.
func w2Flags(makefile []byte) (add, remove []string) {
	depth, in, branch := 0, false, ""
	for _, l := range strings.Split(string(makefile), "\n") {
		t := strings.TrimSpace(l)
		if i := strings.IndexByte(t, '#'); i >= 0 {
			t = strings.TrimSpace(t[:i])
		}
		switch {
		case !in && strings.HasPrefix(t, "ifneq ($(findstring 2, $(KBUILD_EXTRA_WARN)),)"):
			in, depth, branch = true, 1, "add"
			continue
		case !in:
			continue
		case strings.HasPrefix(t, "if"):
			depth++
		case t == "else" && depth == 1:
			branch = "remove"
		case t == "endif":
			depth--
			if depth == 0 {
				return add, remove
			}
		}
		_, v, ok := strings.Cut(t, "+=")
		if !ok || !strings.HasPrefix(strings.TrimSpace(t), "KBUILD_C") {
			continue
		}
		for _, f := range makeFlags(v) {
			if branch == "add" {
				add = append(add, f)
			} else {
				remove = append(remove, f)
			}
		}
	}
	return add, remove
}

var (
	ccOptionRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\(call cc-option,\s*([^),]+)\)`) })
	ccDisableRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\(call cc-disable-warning,\s*([^),]+)\)`) })
)

// makeFlags reads the compiler flags of the right side of a += line.
func makeFlags(v string) []string {
	v = ccOptionRE().ReplaceAllString(v, "$1")
	v = ccDisableRE().ReplaceAllStringFunc(v, func(m string) string {
		return "-Wno-" + strings.TrimSpace(ccDisableRE().FindStringSubmatch(m)[1])
	})
	var out []string
	for _, f := range strings.Fields(v) {
		if strings.HasPrefix(f, "-") {
			out = append(out, f)
		}
	}
	return out
}

// w2Command turns an object's compile command (compiler first) into the
// one that compiles it with W=2's warnings to nowhere: W=2's flags added
// and the ones it turns off removed, no object and no dependency file
// written.
func w2Command(args, add, remove []string) []string {
	drop := map[string]bool{}
	for _, f := range remove {
		drop[f] = true
	}
	out := []string{args[0]}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case drop[a]:
		case a == "-c":
		case a == "-o" && i+1 < len(args):
			i++
		case strings.HasPrefix(a, "-Wp,-MMD,") || strings.HasPrefix(a, "-Wp,-MD,"):
		default:
			out = append(out, a)
		}
	}
	out = append(out, add...)
	return append(out, "-S", "-o", "/dev/null")
}

// seriesFiles returns the files the series has touched by step k.
func (st *steps) seriesFiles(k int) []string {
	return sortedKeys(st.files[k])
}

// w2Objects returns the objects of objs (those patch k affects) that the
// W=2 check compiles: the objects of the C files the series touches,
// and, for each header it touches that none of them includes, the first
// object that does.
func (r *runner) w2Objects(k int, objs []string) []string {
	touched := map[string]bool{}
	for _, p := range r.st.seriesFiles(k) {
		touched[p] = true
	}
	in := map[string]bool{}
	for _, o := range objs {
		in[o] = true
	}
	var out []string
	covered := map[string]bool{}
	addObj := func(o string) {
		out = append(out, o)
		for _, n := range r.depNamesOf(o) {
			if p, ok := strings.CutPrefix(n, "src:"); ok {
				covered[p] = true
			}
		}
	}
	for _, p := range r.st.seriesFiles(k) {
		if o := strings.TrimSuffix(p, ".c") + ".o"; strings.HasSuffix(p, ".c") && in[o] {
			addObj(o)
		}
	}
	for _, p := range r.st.seriesFiles(k) {
		if !strings.HasSuffix(p, ".h") || covered[p] {
			continue
		}
		for _, o := range objs {
			if o == LinkObject {
				continue
			}
			for _, n := range r.depNamesOf(o) {
				if n == "src:"+p {
					addObj(o)
					break
				}
			}
			if covered[p] {
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// depNamesOf returns the dependency names of an object of the tree.
func (r *runner) depNamesOf(obj string) []string {
	if n, ok := r.names[obj]; ok {
		return n
	}
	c := r.cmds[obj]
	if c == nil {
		return nil
	}
	n := depNames(c, r.d.Src, r.d.Obj)
	r.names[obj] = n
	return n
}

// w2 compiles objs with W=2's warnings and returns the warnings on lines
// the series added by step k that the W=1 build (results) did not give,
// or why W=2 could not be checked: the tree has no
// scripts/Makefile.extrawarn, or one that names no W=2 flags.
func (r *runner) w2(ctx context.Context, k int, objs []string, results map[string]*objResult) ([]Problem, string) {
	mf, err := os.ReadFile(filepath.Join(r.d.Src, "scripts/Makefile.extrawarn"))
	if err != nil {
		return nil, "the tree has no scripts/Makefile.extrawarn, which says what W=2 adds"
	}
	add, remove := w2Flags(mf)
	if len(add) == 0 {
		return nil, "scripts/Makefile.extrawarn has no W=2 block (ifneq ($(findstring 2, $(KBUILD_EXTRA_WARN)),)) whose flags kpatch reads"
	}
	seen := map[string]bool{}
	var out []Problem
	for _, obj := range r.w2Objects(k, objs) {
		w1 := map[string]bool{}
		if res := results[obj]; res != nil {
			for _, d := range res.Warnings {
				w1[d.Key()] = true
			}
		}
		cc, err := kbuild.ReadCompileCommand(r.d.Obj, obj)
		if err != nil {
			continue
		}
		args := w2Command(cc.Args, add, remove)
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = r.d.Obj
		var outb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &outb, &outb
		cmd.Run() // its warnings are what counts; W=1 has judged errors
		p := newOutputParser(r.d.Rel)
		p.cur = obj
		for _, l := range strings.Split(outb.String(), "\n") {
			p.line(l)
		}
		res := p.results[obj]
		if res == nil {
			continue
		}
		for _, d := range res.Warnings {
			// by line: the same words on two lines are two warnings
			if w1[d.Key()] || seen[d.String()] {
				continue
			}
			if pr, ok := r.st.addedLine(d, obj, k); ok {
				seen[d.String()] = true
				out = append(out, pr)
			}
		}
	}
	return out, ""
}

// addedLine returns the problem of a diagnostic on a line the series
// added by step k (the patch that wrote it is its origin); ok is false
// for a line of the base or a file the series does not touch.
func (st *steps) addedLine(d Diag, obj string, k int) (Problem, bool) {
	o, ok := st.origin(d.File, d.Line, k)
	if !ok || o.Patch == 0 {
		return Problem{}, false
	}
	return Problem{Diag: d, Object: obj, Origin: o}, true
}

// kernelDocRE reads kernel-doc's warnings: "include/linux/x.h:12:
// warning: ..." (some versions say "Warning: file:line ...").
var kernelDocRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:warning: |Warning: )?(\S+?):(\d+):? (?:warning: )?(.*)$`)
})

// kernelDoc runs scripts/kernel-doc -none -Wall of the source tree src on
// the files the series creates, as they are after step k (written to a
// scratch directory), and returns its warnings on lines the series added.
//
// When kernel-doc cannot run it returns a *NotRunError saying why: the
// tree has none, its interpreter (perl; python3 for the Python
// kernel-doc of Linux 6.16 on) is not installed, or it failed without a
// warning (perl's own error, a usage it does not take).
func (st *steps) kernelDoc(ctx context.Context, src string, k int) ([]Problem, error) {
	script := filepath.Join(src, "scripts/kernel-doc")
	head, err := os.ReadFile(script)
	if err != nil {
		return nil, &NotRunError{"the tree has no scripts/kernel-doc"}
	}
	interp, pkg := "perl", "perl"
	if first, _, _ := strings.Cut(string(head), "\n"); strings.HasPrefix(first, "#!") && strings.Contains(first, "python") {
		interp, pkg = "python3", "python3"
	}
	if _, err := lookPath(interp); err != nil {
		return nil, &NotRunError{fmt.Sprintf("scripts/kernel-doc needs %s, which is not installed (apt-get install %s)", interp, pkg)}
	}
	var files []string
	for _, p := range st.s.Revision.Spec().CreatedFiles() {
		if c, ok := st.at(p, k); ok && c != nil && (strings.HasSuffix(p, ".c") || strings.HasSuffix(p, ".h")) {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "kpatch-kernel-doc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	args := []string{script, "-none", "-Wall"}
	for _, p := range files {
		c, _ := st.at(p, k)
		dst := filepath.Join(tmp, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, c, 0o644); err != nil {
			return nil, err
		}
		args = append(args, p)
	}
	cmd := exec.CommandContext(ctx, interp, args...)
	cmd.Dir = tmp
	out, runErr := cmd.CombinedOutput() // some kernel-docs exit non-zero on warnings
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var probs []Problem
	seen := map[string]bool{}
	warned := false
	for _, l := range strings.Split(string(out), "\n") {
		m := kernelDocRE().FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		warned = true
		line, _ := strconv.Atoi(m[2])
		d := Diag{File: m[1], Line: line, Severity: "warning", Message: "kernel-doc: " + strings.TrimSpace(m[3])}
		if seen[d.String()] {
			continue
		}
		if pr, ok := st.addedLine(d, "", k); ok {
			seen[d.String()] = true
			probs = append(probs, pr)
		}
	}
	if runErr != nil && !warned {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return nil, &NotRunError{fmt.Sprintf("%s scripts/kernel-doc failed (%v): %s", interp, runErr, first)}
	}
	return probs, nil
}

// NotRunError says why a check column (W=2, kernel-doc) did not run: its
// cells are SKIP, never PASS.
type NotRunError struct{ Why string }

func (e *NotRunError) Error() string { return e.Why }
