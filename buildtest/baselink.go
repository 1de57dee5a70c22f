package buildtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/objcode"
)

// The base's verdict on objtool's warnings about vmlinux.o, without
// the base's whole link.
//
// objtool's noinstr check of a function F (vmlinux.o, NOINSTR_VALIDATION)
// reads F's code (its object: instructions, relocations, alternatives,
// annotations), and of each function F calls or jumps to only its
// section, its name and whether it returns, which objtool decides from
// that function's code and, when it has no return of its own, from the
// functions it tail-calls, five deep. Those objects are the warning's
// cone. A link of the series' objects with the base's versions of every
// object of the cone (the cone found again on that link, until it holds
// no object that is not the base's) gives F exactly the code, callees and
// symbol resolution the base's link gives it, so objtool says of F there
// what it says of F in the base's vmlinux.o. The cone is compiled at the
// base; the link and objtool take seconds. Whatever the cone cannot
// settle — a callee no object defines, a weak definition another might
// override, a branch into code outside any function, paravirt's pv_ops
// (whose targets are data), a warning kind that reads more than F and
// its callees, a configuration that changes objtool's arguments — is
// answered by the base's whole link, as before.

// linkKindRE matches the objtool messages about vmlinux.o whose verdict the
// cone settles: those of validate_call() and validate_return() in
// noinstr code.
var linkKindRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^objtool: [A-Za-z0-9_.]+\+0x[0-9a-f]+: (call to \S+\(\) leaves \.noinstr\.text section|return with instrumentation enabled)$`)
})

// coneDepth is how deep objtool's dead-end test follows tail calls
// (__dead_end_function's recursion limit).
const coneDepth = 5

// linkCommand is how kbuild linked vmlinux.o and ran objtool on it.
type linkCommand struct {
	ld       []string
	objtool  []string
	archives []string // the archives ld reads, as kbuild named them
}

// parseLinkCommand reads kbuild's command for vmlinux.o (its .cmd file's
// savedcmd_vmlinux.o): the ld command, then objtool's, plain words.
func parseLinkCommand(saved string) (linkCommand, error) {
	var lc linkCommand
	if strings.ContainsAny(saved, "|&'\"$`<>\\(){}") {
		return lc, fmt.Errorf("the link command is more than two plain commands")
	}
	parts := strings.Split(saved, ";")
	if len(parts) != 2 {
		return lc, fmt.Errorf("the link command does not run objtool after ld")
	}
	lc.ld, lc.objtool = strings.Fields(parts[0]), strings.Fields(parts[1])
	if len(lc.ld) == 0 || len(lc.objtool) < 2 || filepath.Base(lc.objtool[0]) != "objtool" || lc.objtool[len(lc.objtool)-1] != LinkObject {
		return lc, fmt.Errorf("the link command is not ld then objtool on %s", LinkObject)
	}
	out := false
	for i, w := range lc.ld {
		switch {
		case w == "-o":
			out = i+1 < len(lc.ld) && lc.ld[i+1] == LinkObject
		case strings.HasSuffix(w, ".a") && !strings.HasPrefix(w, "-"):
			lc.archives = append(lc.archives, w)
		}
	}
	if !out || len(lc.archives) == 0 {
		return lc, fmt.Errorf("the link command does not link archives into %s", LinkObject)
	}
	return lc, nil
}

// readLinkCommand reads the link command from the object tree.
func readLinkCommand(objDir string) (linkCommand, error) {
	data, err := os.ReadFile(filepath.Join(objDir, ".vmlinux.o.cmd"))
	if err != nil {
		return linkCommand{}, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "savedcmd_vmlinux.o := "); ok {
			return parseLinkCommand(v)
		}
	}
	return linkCommand{}, fmt.Errorf(".vmlinux.o.cmd has no savedcmd_vmlinux.o")
}

// objtoolConfigRE finds the configuration symbols the objtool
// arguments of a link depend on: those kbuild's objtool rules name.
var objtoolConfigRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`CONFIG_[A-Z0-9_]+`) })

// linkSet is a link's objects, some of them read from the base's tree.
type linkSet struct {
	members []string            // every archive member, in link order
	file    func(string) string // member -> the file it is read from
	objs    map[string]*objcode.Object
	objdump func(path string) ([]byte, error)
	// defs are the global definitions by name: member and weakness;
	// locals the members with a local function of the name.
	defs   map[string][]linkDef
	locals map[string][]string
}

type linkDef struct {
	member string
	weak   bool
}

// read returns the symbols (code too when code) of a member's file,
// read once.
func (ls *linkSet) read(member string, code bool) (*objcode.Object, error) {
	path := ls.file(member)
	o := ls.objs[path]
	if o != nil && (!code || o.Code != nil) {
		return o, nil
	}
	var err error
	if code {
		o, err = objcode.ReadWith(path, ls.objdump)
	} else {
		o, err = objcode.ReadSymbols(path)
	}
	if err != nil {
		return nil, err
	}
	ls.objs[path] = o
	return o, nil
}

// index reads every member's symbols.
func (ls *linkSet) index() error {
	ls.defs, ls.locals = map[string][]linkDef{}, map[string][]string{}
	for _, m := range ls.members {
		o, err := ls.read(m, false)
		if err != nil {
			return err
		}
		for n, weak := range o.Defines {
			ls.defs[n] = append(ls.defs[n], linkDef{m, weak})
		}
		for n, f := range o.Funcs {
			if f.Local {
				ls.locals[n] = append(ls.locals[n], m)
			}
		}
	}
	if len(ls.defs["pv_ops"]) > 0 {
		return fmt.Errorf("the kernel has paravirt's pv_ops, whose call targets objtool reads from data")
	}
	return nil
}

// resolve names the member and function a branch of member goes to.
func (ls *linkSet) resolve(member string, t objcode.Target) (string, string, error) {
	if t.Local {
		if t.Name == "" {
			return "", "", fmt.Errorf("%s: a branch lands outside any function (%s+%#x)", member, t.Section, t.Offset)
		}
		return member, t.Name, nil
	}
	var strong []string
	weak := 0
	for _, d := range ls.defs[t.Name] {
		if d.weak {
			weak++
		} else {
			strong = append(strong, d.member)
		}
	}
	switch {
	case len(strong) == 1:
		return strong[0], t.Name, nil
	case len(strong) > 1:
		return "", "", fmt.Errorf("%s is defined in %d objects", t.Name, len(strong))
	case weak > 0:
		return "", "", fmt.Errorf("%s resolves to a weak definition another object might override", t.Name)
	}
	return "", "", fmt.Errorf("%s, which %s calls, is defined by no object of the link", t.Name, member)
}

// cone returns the members whose code objtool's noinstr check of the
// functions roots reads.
func (ls *linkSet) cone(roots []string) (map[string]bool, error) {
	need := map[string]bool{}
	seen := map[string]bool{}
	var dead func(member, fn string, depth int) error
	dead = func(member, fn string, depth int) error {
		need[member] = true
		if depth > coneDepth || seen[member+"\x00"+fn] {
			return nil
		}
		seen[member+"\x00"+fn] = true
		o, err := ls.read(member, true)
		if err != nil {
			return err
		}
		if o.Funcs[fn] == nil || o.Returns(fn) {
			return nil // not code objtool reads further: its object is enough
		}
		parts := partSet(o, fn)
		for _, b := range o.Code[fn] {
			if b.Kind != objcode.Jump || b.Target.Local && parts[b.Target.Name] {
				continue
			}
			tm, tn, err := ls.resolve(member, b.Target)
			if err != nil {
				return err
			}
			if err := dead(tm, tn, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, fn := range roots {
		var at []string
		if m, _, err := ls.resolve("", objcode.Target{Name: fn}); err == nil {
			at = []string{m}
		} else {
			at = ls.locals[fn]
		}
		if len(at) == 0 {
			return nil, fmt.Errorf("%s is defined by no object of the link", fn)
		}
		for _, m := range at {
			need[m] = true
			o, err := ls.read(m, true)
			if err != nil {
				return nil, err
			}
			parts := partSet(o, fn)
			var groups []string
			for p := range parts {
				groups = append(groups, p)
			}
			for g := range o.Code {
				if strings.HasPrefix(g, "<") {
					groups = append(groups, g) // alternatives' replacements, code outside functions
				}
			}
			sort.Strings(groups)
			for _, g := range groups {
				for _, b := range o.Code[g] {
					if b.Kind != objcode.Call && b.Kind != objcode.Jump || b.Target.Local && parts[b.Target.Name] {
						continue
					}
					tm, tn, err := ls.resolve(m, b.Target)
					if err != nil {
						return nil, err
					}
					if err := dead(tm, tn, 0); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return need, nil
}

func partSet(o *objcode.Object, fn string) map[string]bool {
	s := map[string]bool{}
	for _, p := range o.Parts(fn) {
		s[p] = true
	}
	return s
}

// archiveMembersOf lists a thin archive's members (relative to dir).
func archiveMembersOf(ctx context.Context, dir, archive string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "ar", "t", archive)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ar t %s: %w", archive, err)
	}
	return strings.Fields(string(out)), nil
}

// askBaseLink answers, for the objtool warnings ds of the link at the
// step now in the object tree, whether the base's link gives them, from
// a link with the base's versions of their cones (above). It records the
// answers in the tree's state; a warning it cannot settle is left
// unanswered, and isBaseWarning links the whole base for it.
func (r *runner) askBaseLink(ds []Diag) error {
	lb := &r.state.Lazy
	if lb.Full {
		return nil
	}
	var roots []string
	var ask []Diag
	for _, d := range ds {
		if _, ok := lb.Link[d.Key()]; ok || !linkKindRE().MatchString(d.Message) {
			continue
		}
		fn, _, _ := objtoolPlace(d.Message)
		ask = append(ask, d)
		roots = appendUnique(roots, fn)
	}
	if len(ask) == 0 {
		return nil
	}
	keys, used, err := r.hybridLink(roots)
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	if err != nil {
		r.logf("the base's whole link answers for %s's objtool warnings: %v", LinkObject, err)
		return nil
	}
	if lb.Link == nil {
		lb.Link = map[string]bool{}
	}
	for _, d := range ask {
		lb.Link[d.Key()] = keys[d.Key()]
	}
	r.logf("%d objtool warnings of %s asked of a link with the base's %d objects they read (%s)", len(ask), LinkObject, len(used), strings.Join(first(used, 6), " "))
	return r.state.save(r.d.Root)
}

// hybridLink links the series' objects with the base's versions of the
// cone of roots and returns objtool's warning keys on it and the objects
// taken from the base.
func (r *runner) hybridLink(roots []string) (map[string]bool, []string, error) {
	lc, err := readLinkCommand(r.d.Obj)
	if err != nil {
		return nil, nil, err
	}
	b, err := r.baseRunner()
	if err != nil {
		return nil, nil, err
	}
	if err := r.sameObjtoolConfig(b); err != nil {
		return nil, nil, err
	}
	var members []string
	byArchive := map[string][]string{}
	for _, a := range lc.archives {
		ms, err := archiveMembersOf(r.ctx, r.d.Obj, a)
		if err != nil {
			return nil, nil, err
		}
		byArchive[a] = ms
		members = append(members, ms...)
	}
	dir := filepath.Join(b.d.Root, "link")
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	subst := map[string]bool{}
	file := func(m string) string {
		if subst[m] {
			return filepath.Join(b.d.Obj, m)
		}
		return filepath.Join(r.d.Obj, m)
	}
	objdump := func(path string) ([]byte, error) {
		out, _, err := r.runTool(dir, "objdump", "-dr", "--no-show-raw-insn", path)
		return []byte(out), err
	}
	ls := &linkSet{members: members, file: file, objs: map[string]*objcode.Object{}, objdump: objdump}
	for {
		if err := ls.index(); err != nil {
			return nil, nil, err
		}
		need, err := ls.cone(roots)
		if err != nil {
			return nil, nil, err
		}
		var add []string
		for m := range need {
			if !subst[m] {
				add = append(add, m)
			}
		}
		if len(add) == 0 {
			break
		}
		if len(subst)+len(add) > maxAskObjects {
			return nil, nil, fmt.Errorf("the warnings read %d objects", len(subst)+len(add))
		}
		sort.Strings(add)
		if err := r.baseObjectFiles(b, add); err != nil {
			return nil, nil, err
		}
		for _, m := range add {
			subst[m] = true
		}
	}
	tool := filepath.Join(b.d.Obj, "tools", "objtool", "objtool")
	if _, err := os.Stat(tool); err != nil {
		return nil, nil, fmt.Errorf("the base's objtool is not built")
	}
	keys, err := relink(lc, byArchive, file, r.d.Obj, dir, tool, r.runTool)
	if err != nil {
		return nil, nil, err
	}
	used := sortedKeys(subst)
	return keys, used, nil
}

// toolRunner runs a program in a directory, returning its output and
// error streams.
type toolRunner func(dir, name string, args ...string) (string, string, error)

// relink links vmlinux.o in dir as kbuild's command lc did in objDir,
// each archive's members read from file(member), runs objtool on it and
// returns the keys of its warnings.
func relink(lc linkCommand, byArchive map[string][]string, file func(string) string, objDir, dir, objtool string, run toolRunner) (map[string]bool, error) {
	ld := append([]string(nil), lc.ld...)
	for i, w := range ld {
		if ms, ok := byArchive[w]; ok {
			a := filepath.Join(dir, fmt.Sprintf("a%d.a", i))
			args := []string{"cDPrsT", a} // with an index: ld reads lib.a by symbol
			for _, m := range ms {
				args = append(args, file(m))
			}
			if _, _, err := run(dir, "ar", args...); err != nil {
				return nil, err
			}
			ld[i] = a
		} else if !strings.HasPrefix(w, "-") && w != LinkObject && i > 0 {
			if _, err := os.Stat(filepath.Join(objDir, w)); err == nil {
				ld[i] = filepath.Join(objDir, w)
			}
		}
	}
	if _, _, err := run(dir, ld[0], ld[1:]...); err != nil {
		return nil, err
	}
	out, errOut, err := run(dir, objtool, lc.objtool[1:]...)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for _, l := range strings.Split(out+"\n"+errOut, "\n") {
		if m := objtoolRE().FindStringSubmatch(l); m != nil && m[1] == LinkObject {
			keys[Diag{File: LinkObject, Severity: m[2], Message: m[3]}.Key()] = true
		}
	}
	return keys, nil
}

// runTool runs a program in dir, returning what it wrote to its output
// and to its error stream, and counts its CPU time as the base's.
func (r *runner) runTool(dir, name string, args ...string) (string, string, error) {
	return runIn(r.ctx, &r.baseCPU, dir, name, args...)
}

// runIn runs a program in dir, returning what it wrote to its output and
// to its error stream, and adds its CPU time to cpu unless it is nil.
func runIn(ctx context.Context, cpu *time.Duration, dir, name string, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ps := cmd.ProcessState; ps != nil && cpu != nil {
		*cpu += ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		return string(out), stderr.String(), fmt.Errorf("%s: %w: %s", filepath.Base(name), err, firstLine(stderr.String()))
	}
	return string(out), stderr.String(), nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// sameObjtoolConfig checks that the configuration symbols kbuild's
// objtool rules read have the same values at the base as now, so that
// objtool is run with the same arguments.
func (r *runner) sameObjtoolConfig(b *runner) error {
	raw, err := os.ReadFile(filepath.Join(b.d.Obj, ".config"))
	if err != nil {
		return err
	}
	base, err := kbuild.ParseConfig(strings.NewReader(string(raw)))
	if err != nil {
		return err
	}
	for _, f := range []string{"scripts/Makefile.vmlinux_o", "scripts/Makefile.lib"} {
		data, err := os.ReadFile(filepath.Join(b.d.Src, f))
		if err != nil {
			return err
		}
		for _, sym := range objtoolConfigRE().FindAllString(string(data), -1) {
			if base[sym] != r.config[sym] {
				return fmt.Errorf("%s is %q at the base and %q now", sym, base[sym], r.config[sym])
			}
		}
	}
	return nil
}

// baseObjectFiles makes sure each of objs is compiled in the base's
// object tree, asking the base (baseObjects) about those not asked yet
// and compiling again those asked whose file is gone.
func (r *runner) baseObjectFiles(b *runner, objs []string) error {
	lb := &r.state.Lazy
	for _, o := range objs {
		if e, ok := lb.Objects[o]; ok && e.Exists {
			if _, err := os.Stat(filepath.Join(b.d.Obj, o)); err != nil {
				delete(lb.Objects, o)
			}
		}
	}
	got, err := r.baseObjects(objs)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if !got[o].Exists {
			return fmt.Errorf("%s is not built at the base", o)
		}
		if _, err := os.Stat(filepath.Join(b.d.Obj, o)); err != nil {
			return fmt.Errorf("%s is not in the base's object tree", o)
		}
	}
	return nil
}
