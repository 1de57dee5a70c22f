// Package objcode reads the code of x86-64 relocatable objects: each
// function's symbol (debug/elf) and the calls, jumps and returns in it
// (objdump -dr), with every branch's target named as the linker will
// resolve it — a symbol of the object, or a name another object defines.
// It answers what objtool's checks of one function read of the others:
// whom the function calls or jumps to, and whether a function returns.
package objcode

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Func is a function symbol of an object.
type Func struct {
	Name    string
	Section string
	Value   uint64
	Size    uint64
	Local   bool // STB_LOCAL: only this object's code can name it
	Weak    bool // STB_WEAK: another object's strong definition wins
}

// Kind is what a branch does.
type Kind int

// The branches objtool follows.
const (
	Call     Kind = iota // call to a target
	Jump                 // jmp or jcc to a target
	Return               // ret, or a jump to the return thunk
	Indirect             // call or jmp through a register or memory
)

// Branch is one branch instruction of a function.
type Branch struct {
	Kind Kind
	// Target is where a direct branch goes: Local set when it is a
	// function of this object (by name), else Name is a global symbol
	// the link resolves. Offset is the target's offset in Section when
	// the branch lands outside every function symbol.
	Target Target
}

// Target is the destination of a direct branch.
type Target struct {
	Name    string // the function's name ("" when no function holds it)
	Local   bool   // a function of the same object
	Section string // the section, when Local or unnamed
	Offset  uint64 // the offset in Section, when unnamed
}

// Object is the code of one object file.
type Object struct {
	Path  string
	Funcs map[string]*Func // by name; a local name may repeat in an object: the first wins
	// Code is each function's branches, by name; "<section>" keys the
	// branches of code in an executable section outside any function
	// (.altinstr_replacement).
	Code map[string][]Branch
	// Defines are the global and weak function and object symbols the
	// object defines, name -> weak.
	Defines map[string]bool

	bySection map[string][]*Func // functions by section and offset, for funcAt
}

// ReadSymbols reads the function and global symbols of the object at path.
func ReadSymbols(path string) (*Object, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 || f.Type != elf.ET_REL {
		return nil, fmt.Errorf("%s: not an x86-64 relocatable object", path)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	o := &Object{Path: path, Funcs: map[string]*Func{}, Defines: map[string]bool{}}
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE && s.Section != elf.SHN_XINDEX {
			continue
		}
		bind, typ := elf.ST_BIND(s.Info), elf.ST_TYPE(s.Info)
		if bind != elf.STB_LOCAL && (typ == elf.STT_FUNC || typ == elf.STT_OBJECT || typ == elf.STT_NOTYPE) && s.Name != "" {
			o.Defines[s.Name] = bind == elf.STB_WEAK
		}
		if typ != elf.STT_FUNC || int(s.Section) >= len(f.Sections) {
			continue
		}
		if _, dup := o.Funcs[s.Name]; dup {
			continue
		}
		o.Funcs[s.Name] = &Func{Name: s.Name, Section: f.Sections[s.Section].Name, Value: s.Value, Size: s.Size,
			Local: bind == elf.STB_LOCAL, Weak: bind == elf.STB_WEAK}
	}
	return o, nil
}

// funcAt returns the function of section sec that holds offset off.
func (o *Object) funcAt(sec string, off uint64) *Func {
	if o.bySection == nil {
		o.bySection = map[string][]*Func{}
		for _, f := range o.Funcs {
			o.bySection[f.Section] = append(o.bySection[f.Section], f)
		}
		for _, fs := range o.bySection {
			sort.Slice(fs, func(i, j int) bool {
				if fs[i].Value != fs[j].Value {
					return fs[i].Value < fs[j].Value
				}
				return fs[i].Name < fs[j].Name
			})
		}
	}
	fs := o.bySection[sec]
	// The functions that start last at or before off (aliases share a
	// start): functions do not overlap.
	i := sort.Search(len(fs), func(i int) bool { return fs[i].Value > off })
	for j := i - 1; j >= 0 && fs[j].Value == fs[i-1].Value; j-- {
		if f := fs[j]; off < f.Value+f.Size || f.Size == 0 && off == f.Value {
			return f
		}
	}
	return nil
}

// Read reads the object at path: its symbols and, with objdump, the
// branches of its code.
func Read(ctx context.Context, path string) (*Object, error) {
	return ReadWith(path, func(path string) ([]byte, error) {
		out, err := exec.CommandContext(ctx, "objdump", "-dr", "--no-show-raw-insn", path).Output()
		if err != nil {
			return nil, fmt.Errorf("objdump -dr %s: %w", path, err)
		}
		return out, nil
	})
}

// ReadWith is Read with objdump run by the caller: objdump returns the
// output of `objdump -dr --no-show-raw-insn path`.
func ReadWith(path string, objdump func(path string) ([]byte, error)) (*Object, error) {
	o, err := ReadSymbols(path)
	if err != nil {
		return nil, err
	}
	out, err := objdump(path)
	if err != nil {
		return nil, err
	}
	o.Code, err = o.parse(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

var (
	sectionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Disassembly of section (\S+):$`) })
	headerRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]+ <([^>]+)>:$`) })
	insnRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([0-9a-f]+):\t(\S+)\s*(.*)$`) })
	relocRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s+([0-9a-f]+): (R_X86_64_\S+)\s+(\S+)$`) })
	annotRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]+ <([^>+]+)(?:\+0x([0-9a-f]+))?>$`) })
)

// rawBranch is a branch as objdump prints it, its relocation not yet read.
type rawBranch struct {
	addr     uint64
	mnemonic string
	operand  string
	reloc    string // the relocation's symbol expression, when one falls in the instruction
	fn       string // the function (or "<section>") it is in
	section  string
}

// parse reads objdump -dr output into each function's branches.
func (o *Object) parse(out []byte) (map[string][]Branch, error) {
	code := map[string][]Branch{}
	var raw []*rawBranch
	var sec string
	var last *rawBranch // the last instruction, to take its relocation
	var lastAddr uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if m := sectionRE().FindStringSubmatch(l); m != nil {
			sec, last = m[1], nil
			continue
		}
		if headerRE().MatchString(l) {
			last = nil
			continue
		}
		if m := relocRE().FindStringSubmatch(l); m != nil {
			at, _ := strconv.ParseUint(m[1], 16, 64)
			if last != nil && last.reloc == "" && at > lastAddr && at <= lastAddr+2 {
				last.reloc = m[3]
			}
			continue
		}
		m := insnRE().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		addr, err := strconv.ParseUint(m[1], 16, 64)
		if err != nil {
			continue
		}
		last, lastAddr = nil, addr
		mn := m[2]
		for _, p := range []string{"bnd", "notrack", "rep", "repz"} {
			if mn == p {
				f := strings.Fields(m[3])
				if len(f) == 0 {
					break
				}
				mn, m[3] = f[0], strings.TrimSpace(strings.TrimPrefix(m[3], f[0]))
			}
		}
		if !isBranch(mn) {
			continue
		}
		// The function by address: objdump's headers name labels too
		// (an assembler's inner labels, local ones).
		fn := "<" + sec + ">"
		if f := o.funcAt(sec, addr); f != nil {
			fn = f.Name
		}
		b := &rawBranch{addr: addr, mnemonic: mn, operand: m[3], fn: fn, section: sec}
		raw = append(raw, b)
		last = b
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, b := range raw {
		br, ok := o.branch(b)
		if ok {
			code[b.fn] = append(code[b.fn], br)
		}
	}
	return code, nil
}

// isBranch reports whether mnemonic is a call, a jump or a return.
func isBranch(mn string) bool {
	mn = strings.TrimSuffix(mn, "q")
	switch mn {
	case "call", "jmp", "ret", "lret", "iret", "sysret", "sysexit":
		return true
	}
	return strings.HasPrefix(mn, "j") // jcc, jrcxz
}

// returnThunks are the symbols a jump to which is a return: objtool's
// arch_is_rethunk() and arch_is_embedded_insn().
var returnThunks = map[string]bool{"__x86_return_thunk": true, "srso_return_thunk": true, "srso_alias_return_thunk": true,
	"srso_untrain_ret": true, "srso_alias_untrain_ret": true, "srso_safe_ret": true, "srso_alias_safe_ret": true,
	"retbleed_return_thunk": true, "entry_untrain_ret": true, "retbleed_untrain_ret": true, "__ret": true}

// branch resolves one branch instruction.
func (o *Object) branch(b *rawBranch) (Branch, bool) {
	mn := strings.TrimSuffix(b.mnemonic, "q")
	switch mn {
	case "ret", "lret", "iret", "sysret", "sysexit":
		return Branch{Kind: Return}, true
	}
	kind := Jump
	if mn == "call" {
		kind = Call
	}
	if strings.HasPrefix(b.operand, "*") {
		return Branch{Kind: Indirect}, true
	}
	if b.reloc != "" {
		name, addend := splitReloc(b.reloc)
		if strings.HasPrefix(name, ".") {
			// A section-relative target: rel32 is S + A - P and the
			// branch ends 4 bytes after P, so the target is A + 4.
			off := uint64(addend + 4)
			if f := o.funcAt(name, off); f != nil {
				return Branch{Kind: kind, Target: Target{Name: f.Name, Local: true, Section: f.Section}}, true
			}
			return Branch{Kind: kind, Target: Target{Local: true, Section: name, Offset: off}}, true
		}
		if kind == Jump && returnThunks[name] {
			return Branch{Kind: Return}, true
		}
		if f, ok := o.Funcs[name]; ok && f.Local {
			return Branch{Kind: kind, Target: Target{Name: name, Local: true, Section: f.Section}}, true
		}
		return Branch{Kind: kind, Target: Target{Name: name}}, true
	}
	// No relocation: a target in the same section, which objdump names.
	m := annotRE().FindStringSubmatch(strings.TrimSpace(b.operand))
	if m == nil {
		return Branch{}, false
	}
	addr, err := strconv.ParseUint(strings.Fields(b.operand)[0], 16, 64)
	if err != nil {
		return Branch{}, false
	}
	if f := o.funcAt(b.section, addr); f != nil {
		return Branch{Kind: kind, Target: Target{Name: f.Name, Local: true, Section: f.Section}}, true
	}
	return Branch{Kind: kind, Target: Target{Local: true, Section: b.section, Offset: addr}}, true
}

// splitReloc splits "schedule-0x4" or ".text+0x102" into the symbol and
// the addend.
func splitReloc(s string) (string, int64) {
	for i := len(s) - 1; i > 0; i-- {
		if s[i] != '+' && s[i] != '-' {
			continue
		}
		if !strings.HasPrefix(s[i+1:], "0x") {
			break
		}
		v, err := strconv.ParseInt(s[i+3:], 16, 64)
		if err != nil {
			break
		}
		if s[i] == '-' {
			v = -v
		}
		return s[:i], v
	}
	return s, 0
}

// Returns reports whether function fn has a return of its own (objtool's
// dead-end test looks no further then).
func (o *Object) Returns(fn string) bool {
	for _, b := range o.Code[fn] {
		if b.Kind == Return {
			return true
		}
	}
	return false
}

// Parts returns fn and its parts gcc split out of it (fn.cold,
// fn.cold.1), which objtool checks as part of it.
func (o *Object) Parts(fn string) []string {
	out := []string{fn}
	for n := range o.Funcs {
		if strings.HasPrefix(n, fn+".cold") {
			out = append(out, n)
		}
	}
	sort.Strings(out[1:])
	return out
}
