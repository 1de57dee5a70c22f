// Package symtab turns the addresses of a user stack trace into function
// names with debug/elf: the symbols (.symtab and .dynsym) of the ELF
// objects loaded into the process, each at its load bias.
package symtab

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"kpatch/unwind"
)

// Location is where an address is: the function holding it, the offset
// into that function, and the object (file) it belongs to. Func is empty
// when no symbol covers the address, Object when no object does.
type Location struct {
	Func   string
	Offset uint64
	Object string
}

// String formats the location as "func+0xoff" or "??", followed by " (object)"
// when the object is known.
func (l Location) String() string {
	s := "??"
	if l.Func != "" {
		s = fmt.Sprintf("%s+%#x", l.Func, l.Offset)
	}
	if l.Object != "" {
		s += " (" + l.Object + ")"
	}
	return s
}

type symbol struct {
	addr, size uint64 // link-time address
	name       string
}

type object struct {
	name       string
	bias       uint64
	start, end uint64 // run-time range of its PT_LOAD segments
	syms       []symbol
}

// Table holds the symbols of the objects of one address space, and the
// names of its mappings.
type Table struct {
	objs []*object
	maps []unwind.Mapping
}

// AddFile adds the symbols of the ELF file at path, loaded at bias (the
// difference between its run-time and link-time addresses; zero for a
// non-PIE executable).
func (t *Table) AddFile(path string, bias uint64) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return t.AddELF(path, f, bias)
}

// AddELF adds the symbols of f, named name, loaded at bias.
func (t *Table) AddELF(name string, f *elf.File, bias uint64) error {
	o := &object{name: name, bias: bias, start: ^uint64(0)}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			o.start = min(o.start, p.Vaddr+bias)
			o.end = max(o.end, p.Vaddr+p.Memsz+bias)
		}
	}
	if o.end == 0 {
		return fmt.Errorf("%s has no PT_LOAD segment", name)
	}
	var syms []elf.Symbol
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		s, err := read()
		if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
			return fmt.Errorf("%s: %w", name, err)
		}
		syms = append(syms, s...)
	}
	for _, s := range syms {
		typ := elf.ST_TYPE(s.Info)
		if (typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC) || s.Section == elf.SHN_UNDEF || s.Value == 0 {
			continue
		}
		o.syms = append(o.syms, symbol{addr: s.Value, size: s.Size, name: s.Name})
	}
	t.add(o)
	return nil
}

// AddNM adds the function symbols of an object named name as `nm -S`
// prints them ("ADDR SIZE TYPE NAME" a line, hexadecimal), at bias zero:
// for symbolizing a saved console log without the programs' binaries.
func (t *Table) AddNM(name string, r io.Reader) error {
	o := &object{name: name, start: ^uint64(0)}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			return fmt.Errorf("%s: line %d: want ADDR SIZE TYPE NAME, as nm -S prints", name, n)
		}
		addr, err1 := strconv.ParseUint(f[0], 16, 64)
		size, err2 := strconv.ParseUint(f[1], 16, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("%s: line %d: ADDR and SIZE must be hexadecimal", name, n)
		}
		o.syms = append(o.syms, symbol{addr: addr, size: size, name: f[3]})
		o.start = min(o.start, addr)
		o.end = max(o.end, addr+max(size, 1))
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(o.syms) == 0 {
		return fmt.Errorf("%s: no symbols", name)
	}
	t.add(o)
	return nil
}

// add sorts o's symbols by address, bigger symbols first, so that aliases
// resolve to one name deterministically, and adds o to t.
func (t *Table) add(o *object) {
	sort.SliceStable(o.syms, func(i, j int) bool {
		a, b := o.syms[i], o.syms[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		if a.size != b.size {
			return a.size > b.size
		}
		return a.name < b.name
	})
	t.objs = append(t.objs, o)
}

// AddMappings records the file mappings of the address space, for naming
// the object an address belongs to.
func (t *Table) AddMappings(maps []unwind.Mapping) {
	t.maps = append(t.maps, maps...)
}

// Bias returns the load bias of f when its file offset off is mapped at
// start, as in a mapping of NT_FILE or /proc/PID/maps, by finding the
// PT_LOAD segment the kernel mapped at that offset. Two segments can share
// a file page (a read-only segment and the read-write one after it); the
// first is used then, so the mapping at offset 0, which only the first
// segment has, is the one to pass.
func Bias(f *elf.File, start, off uint64) (uint64, bool) {
	const page = 4096
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if p.Off&^(page-1) == off {
			return start - p.Vaddr&^(page-1), true
		}
	}
	return 0, false
}

// Sigreturn trampolines: a return address at their very first byte is where
// a signal handler returns to, not the address after a call.
var restorers = map[string]bool{
	"__restore_rt":          true,
	"__restore":             true,
	"__kernel_sigreturn":    true,
	"__kernel_rt_sigreturn": true,
	"__vdso_rt_sigreturn":   true,
}

// Locate returns where pc is. For a caller's frame (caller set), pc is a
// return address, so the function is looked up at pc-1, as debuggers do,
// except when pc is the first byte of a sigreturn trampoline such as
// __restore_rt. The offset is always from pc itself.
func (t *Table) Locate(pc uint64, caller bool) Location {
	var loc Location
	for _, m := range t.maps {
		if pc >= m.Start && pc < m.End {
			loc.Object = m.Path
			break
		}
	}
	look := pc
	if caller && pc > 0 {
		look = pc - 1
		if s, o, ok := t.symbolAt(pc); ok && s.addr+o.bias == pc && restorers[s.name] {
			look = pc
		}
	}
	s, o, ok := t.symbolAt(look)
	if o != nil && loc.Object == "" {
		loc.Object = o.name
	}
	if ok {
		loc.Func = s.name
		loc.Offset = pc - (s.addr + o.bias)
	}
	return loc
}

// symbolAt returns the symbol holding the run-time address a, and its
// object. A symbol of size zero holds the addresses up to the next symbol.
func (t *Table) symbolAt(a uint64) (symbol, *object, bool) {
	for _, o := range t.objs {
		if a < o.start || a >= o.end {
			continue
		}
		link := a - o.bias
		i := sort.Search(len(o.syms), func(i int) bool { return o.syms[i].addr > link }) - 1
		// Walk back over symbols that end before link to an enclosing one.
		for ; i >= 0; i-- {
			s := o.syms[i]
			if s.size == 0 || link < s.addr+s.size {
				return s, o, true
			}
			if i > 0 && o.syms[i-1].addr == s.addr {
				continue
			}
			break
		}
		return symbol{}, o, false
	}
	return symbol{}, nil, false
}

// AddMapped adds the symbols of every ELF file maps names, opened under
// root (when not empty), at the bias of its mapping; a file that is the
// same as skip (when not nil), the executable added already, is left
// out. Files that cannot be read are reported in the errors; the others
// are added.
func (t *Table) AddMapped(maps []unwind.Mapping, root string, skip os.FileInfo) []error {
	var errs []error
	done := map[string]bool{}
	// For each file, its mapping of the lowest offset: see Bias.
	first := map[string]unwind.Mapping{}
	var order []string
	for _, m := range maps {
		f, ok := first[m.Path]
		if !ok {
			order = append(order, m.Path)
		}
		if !ok || m.Offset < f.Offset {
			first[m.Path] = m
		}
	}
	for _, p := range order {
		m := first[p]
		if done[m.Path] {
			continue
		}
		path := filepath.Join(root, m.Path)
		if fi, err := os.Stat(path); err == nil && skip != nil && os.SameFile(fi, skip) {
			done[m.Path] = true
			continue
		}
		f, err := elf.Open(path)
		if err != nil {
			done[m.Path] = true
			errs = append(errs, fmt.Errorf("%s: %w", m.Path, err))
			continue
		}
		if bias, ok := Bias(f, m.Start, m.Offset); ok {
			done[m.Path] = true
			if err := t.AddELF(m.Path, f, bias); err != nil {
				errs = append(errs, err)
			}
		}
		f.Close()
	}
	return errs
}
