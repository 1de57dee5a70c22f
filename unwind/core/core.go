// Package core reads ELF core dumps of x86 Linux processes, 64-bit
// (EM_X86_64) and 32-bit (EM_386, a compat task of a 64-bit kernel), for
// the unwind walker: the threads' registers from NT_PRSTATUS, the auxiliary
// vector from NT_AUXV, the file mappings from NT_FILE, and the memory of
// the PT_LOAD segments. Memory a segment does not hold in the core (a
// file-backed mapping the kernel did not dump: FileSiz is smaller than
// MemSiz) is read from the mapped file when NT_FILE names it and the file
// can be opened. A core cut short is refused when it is opened, with a
// *TruncatedError naming the segment (or header) that is cut and where.
// CheckExe tells whether an executable is the core's program before its
// symbols are used.
//
// A *File is an unwind.Memory, so it can be walked directly:
//
//	c, err := core.Open("core")
//	...
//	trace, err := cfg.Walk(c, c.Threads[0].Regs)
package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"kpatch/unwind"
)

// Note types read from the core.
const (
	ntPRStatus = 1
	ntAuxv     = 6
	ntFile     = 0x46494c45 // "FILE"
)

// Auxiliary vector tags used here.
const (
	AtPhdr        = 3  // AT_PHDR: the program headers of the program in memory
	AtEntry       = 9  // AT_ENTRY: the program's entry point
	AtSysinfoEHdr = 33 // AT_SYSINFO_EHDR: the vDSO's ELF header
)

// FormatError is a problem with the core file's contents at an offset,
// like debug/elf's FormatError.
type FormatError struct {
	Off int64
	Msg string
	Val any
}

// Error reports the problem and its offset in the file.
func (e *FormatError) Error() string {
	msg := e.Msg
	if e.Val != nil {
		msg += fmt.Sprintf(" '%v'", e.Val)
	}
	return fmt.Sprintf("%s in record at byte %#x", msg, e.Off)
}

// Thread is a thread of the dumped process, from its NT_PRSTATUS note.
type Thread struct {
	PID    int
	Signal int
	// Regs are the thread's user registers for the walker. For a 32-bit
	// core Compat is set and the segment bases are zero, as they are for
	// the flat __USER32_CS and __USER_DS segments; CS and SS tell whether
	// the thread used other selectors.
	Regs unwind.Regs
	// CS and SS are the code and stack segment selectors.
	CS, SS uint64
}

// AuxEntry is an entry of the auxiliary vector.
type AuxEntry struct {
	Tag, Val uint64
}

type load struct {
	vaddr, memsz, off, filesz uint64
}

// File is an open core dump.
type File struct {
	// ELF is the core's ELF file.
	ELF *elf.File
	// Threads are the dumped threads, the one that dumped first.
	Threads []Thread
	// Auxv is the auxiliary vector.
	Auxv []AuxEntry
	// Mappings are the file mappings of NT_FILE.
	Mappings []unwind.Mapping
	// Root, when not empty, is prefixed to the paths of Mappings when
	// the mapped files are opened, for cores from another system.
	Root string

	r      io.ReaderAt
	loads  []load
	order  binary.ByteOrder
	word   int
	closer io.Closer
	files  map[string]*os.File
}

// Open opens the core dump at path.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	c, err := New(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.closer = f
	return c, nil
}

// New reads a core dump from r.
func New(r io.ReaderAt) (*File, error) {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil || string(magic[:]) != elf.ELFMAG {
		return nil, &FormatError{Off: 0, Msg: "not an ELF file: give a core dump (from gdb's gcore or a crash)"}
	}
	if size, ok := readerSize(r); ok {
		if err := checkSize(r, size); err != nil {
			return nil, err
		}
	}
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, err
	}
	if ef.Type != elf.ET_CORE {
		return nil, &FormatError{Off: 16, Msg: "not a core file: ELF type", Val: ef.Type}
	}
	c := &File{ELF: ef, r: r, order: ef.ByteOrder, files: map[string]*os.File{}}
	switch {
	case ef.Class == elf.ELFCLASS64 && ef.Machine == elf.EM_X86_64:
		c.word = 8
	case ef.Class == elf.ELFCLASS32 && ef.Machine == elf.EM_386:
		c.word = 4
	default:
		return nil, &FormatError{Off: 18, Msg: "unsupported machine", Val: fmt.Sprintf("%v %v", ef.Class, ef.Machine)}
	}
	for i, p := range ef.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			if p.Filesz > p.Memsz {
				return nil, &FormatError{Off: phOff(ef, i), Msg: "PT_LOAD file size above memory size", Val: p.Filesz}
			}
			c.loads = append(c.loads, load{vaddr: p.Vaddr, memsz: p.Memsz, off: p.Off, filesz: p.Filesz})
		case elf.PT_NOTE:
			if err := c.readNotes(p); err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(c.loads, func(i, j int) bool { return c.loads[i].vaddr < c.loads[j].vaddr })
	if len(c.Threads) == 0 {
		return nil, &FormatError{Off: 0, Msg: "core has no NT_PRSTATUS note"}
	}
	return c, nil
}

// phOff returns the file offset of program header i.
func phOff(ef *elf.File, i int) int64 {
	if ef.Class == elf.ELFCLASS64 {
		return 64 + int64(i)*56
	}
	return 52 + int64(i)*32
}

// Close closes the core and the mapped files it opened.
func (c *File) Close() error {
	var err error
	for _, f := range c.files {
		if f != nil {
			f.Close()
		}
	}
	if c.closer != nil {
		err = c.closer.Close()
	}
	return err
}

// WordSize is the size in bytes of a word of the dumped process: 8 or 4.
func (c *File) WordSize() int { return c.word }

// Aux returns the value of the auxiliary vector entry tag.
func (c *File) Aux(tag uint64) (uint64, bool) {
	for _, a := range c.Auxv {
		if a.Tag == tag {
			return a.Val, true
		}
	}
	return 0, false
}

func (c *File) readNotes(p *elf.Prog) error {
	data := make([]byte, p.Filesz)
	if n, err := p.ReadAt(data, 0); n != len(data) {
		return &FormatError{Off: int64(p.Off), Msg: fmt.Sprintf("reading PT_NOTE: %v", err)}
	}
	for off := 0; off < len(data); {
		at := int64(p.Off) + int64(off)
		if len(data)-off < 12 {
			return &FormatError{Off: at, Msg: "truncated note header"}
		}
		namesz := int(c.order.Uint32(data[off:]))
		descsz := int(c.order.Uint32(data[off+4:]))
		typ := c.order.Uint32(data[off+8:])
		nameEnd := off + 12 + namesz
		descOff := off + 12 + align4(namesz)
		descEnd := descOff + descsz
		if namesz < 0 || descsz < 0 || nameEnd > len(data) || descOff > len(data) || descEnd > len(data) || descEnd < descOff {
			return &FormatError{Off: at, Msg: "note runs past its segment", Val: fmt.Sprintf("namesz=%d descsz=%d", namesz, descsz)}
		}
		name := string(bytes.TrimRight(data[off+12:nameEnd], "\x00"))
		desc := data[descOff:descEnd]
		descAt := int64(p.Off) + int64(descOff)
		if name == "CORE" {
			var err error
			switch typ {
			case ntPRStatus:
				err = c.prstatus(desc, descAt)
			case ntAuxv:
				err = c.auxv(desc, descAt)
			case ntFile:
				err = c.ntFile(desc, descAt)
			}
			if err != nil {
				return err
			}
		}
		off = off + 12 + align4(namesz) + align4(descsz)
	}
	return nil
}

func align4(n int) int { return (n + 3) &^ 3 }

// Layout of struct elf_prstatus: pr_reg's offset and size, and where the
// registers the walker needs are in it (struct user_regs_struct).
type prLayout struct {
	regOff, nregs             int
	ip, sp, bp, cs, ss, pidAt int
}

var (
	prX86_64 = prLayout{regOff: 112, nregs: 27, bp: 4, ip: 16, cs: 17, sp: 19, ss: 20, pidAt: 32}
	prI386   = prLayout{regOff: 72, nregs: 17, bp: 5, ip: 12, cs: 13, sp: 15, ss: 16, pidAt: 24}
)

func (c *File) prstatus(desc []byte, at int64) error {
	l := prX86_64
	if c.word == 4 {
		l = prI386
	}
	if len(desc) < l.regOff+l.nregs*c.word {
		return &FormatError{Off: at, Msg: "NT_PRSTATUS too short", Val: len(desc)}
	}
	reg := func(i int) uint64 { return c.readWord(desc[l.regOff+i*c.word:]) }
	t := Thread{
		PID:    int(int32(c.order.Uint32(desc[l.pidAt:]))),
		Signal: int(int16(c.order.Uint16(desc[12:]))),
		CS:     reg(l.cs),
		SS:     reg(l.ss),
	}
	t.Regs = unwind.Regs{IP: reg(l.ip), SP: reg(l.sp), FP: reg(l.bp), Compat: c.word == 4}
	c.Threads = append(c.Threads, t)
	return nil
}

func (c *File) readWord(b []byte) uint64 {
	if c.word == 4 {
		return uint64(c.order.Uint32(b))
	}
	return c.order.Uint64(b)
}

func (c *File) auxv(desc []byte, at int64) error {
	if len(desc)%(2*c.word) != 0 {
		return &FormatError{Off: at, Msg: "NT_AUXV size is not a multiple of an entry", Val: len(desc)}
	}
	for i := 0; i < len(desc); i += 2 * c.word {
		a := AuxEntry{Tag: c.readWord(desc[i:]), Val: c.readWord(desc[i+c.word:])}
		if a.Tag == 0 {
			break
		}
		c.Auxv = append(c.Auxv, a)
	}
	return nil
}

// ntFile parses NT_FILE: count and page size, count (start, end, page
// offset) triples, then count NUL-terminated paths.
func (c *File) ntFile(desc []byte, at int64) error {
	w := c.word
	if len(desc) < 2*w {
		return &FormatError{Off: at, Msg: "NT_FILE too short", Val: len(desc)}
	}
	count := c.readWord(desc)
	page := c.readWord(desc[w:])
	if count > uint64(len(desc))/uint64(3*w) {
		return &FormatError{Off: at, Msg: "NT_FILE count too large", Val: count}
	}
	names := desc[2*w+int(count)*3*w:]
	nameAt := at + int64(2*w+int(count)*3*w)
	for i := 0; i < int(count); i++ {
		e := desc[2*w+i*3*w:]
		nul := bytes.IndexByte(names, 0)
		if nul < 0 {
			return &FormatError{Off: nameAt, Msg: fmt.Sprintf("NT_FILE path %d is not NUL-terminated", i)}
		}
		m := unwind.Mapping{
			Start:  c.readWord(e),
			End:    c.readWord(e[w:]),
			Offset: c.readWord(e[2*w:]) * page,
			Path:   string(names[:nul]),
		}
		if m.End < m.Start {
			return &FormatError{Off: at + int64(2*w+i*3*w), Msg: "NT_FILE mapping ends before it starts", Val: fmt.Sprintf("%#x-%#x", m.Start, m.End)}
		}
		c.Mappings = append(c.Mappings, m)
		names = names[nul+1:]
		nameAt += int64(nul + 1)
	}
	return nil
}

// ErrNotDumped is wrapped by the fault a read gets for memory the core
// does not hold and no readable mapped file provides.
var ErrNotDumped = errors.New("memory not in the core")

// ReadAt reads len(p) bytes of the process's memory at addr, from the
// core's PT_LOAD segments or, where they hold no bytes, from the file
// NT_FILE maps there. Memory neither has is a fault (*unwind.FaultError).
func (c *File) ReadAt(p []byte, addr uint64) error {
	start, want := addr, len(p)
	for len(p) > 0 {
		n, err := c.readPiece(p, addr)
		if err != nil {
			return &unwind.FaultError{Addr: start, Len: want, Err: err}
		}
		p = p[n:]
		if len(p) > 0 && addr+uint64(n) < addr {
			return &unwind.FaultError{Addr: start, Len: want, Reason: "read wraps around the address space"}
		}
		addr += uint64(n)
	}
	return nil
}

// readPiece reads a prefix of p at addr from one source.
func (c *File) readPiece(p []byte, addr uint64) (int, error) {
	i := sort.Search(len(c.loads), func(i int) bool { return c.loads[i].vaddr+c.loads[i].memsz > addr })
	var l *load
	if i < len(c.loads) && c.loads[i].vaddr <= addr {
		l = &c.loads[i]
	}
	if l != nil && addr-l.vaddr < l.filesz {
		rel := addr - l.vaddr
		n := min(uint64(len(p)), l.filesz-rel)
		got, err := c.r.ReadAt(p[:n], int64(l.off+rel))
		if uint64(got) != n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("core truncated: segment at %#x: %v", l.vaddr, err)
		}
		return int(n), nil
	}
	// Not in the core's file bytes: the mapped file, if any.
	limit := uint64(len(p))
	if l != nil {
		limit = min(limit, l.vaddr+l.memsz-addr)
	} else if i < len(c.loads) {
		limit = min(limit, c.loads[i].vaddr-addr)
	}
	for _, m := range c.Mappings {
		if addr < m.Start || addr >= m.End {
			continue
		}
		f := c.mappedFile(m.Path)
		if f == nil {
			return 0, fmt.Errorf("%w: %#x is in %s, which cannot be read", ErrNotDumped, addr, m.Path)
		}
		n := min(limit, m.End-addr)
		got, err := f.ReadAt(p[:n], int64(m.Offset+addr-m.Start))
		if got == 0 {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("%w: %#x is past the end of %s: %v", ErrNotDumped, addr, m.Path, err)
		}
		return got, nil
	}
	if l != nil {
		return 0, fmt.Errorf("%w: %#x is in a segment whose bytes were not dumped", ErrNotDumped, addr)
	}
	return 0, fmt.Errorf("%#x is not mapped", addr)
}

func (c *File) mappedFile(path string) *os.File {
	if f, ok := c.files[path]; ok {
		return f
	}
	f, err := os.Open(filepath.Join(c.Root, path))
	if err != nil {
		f = nil
	}
	c.files[path] = f
	return f
}

// readDumped reads len(p) bytes at addr from the bytes the core holds
// (not from mapped files) and reports whether they were all there.
func (c *File) readDumped(p []byte, addr uint64) bool {
	for len(p) > 0 {
		i := sort.Search(len(c.loads), func(i int) bool { return c.loads[i].vaddr+c.loads[i].memsz > addr })
		if i == len(c.loads) || c.loads[i].vaddr > addr || addr-c.loads[i].vaddr >= c.loads[i].filesz {
			return false
		}
		l := c.loads[i]
		n := min(uint64(len(p)), l.filesz-(addr-l.vaddr))
		if got, _ := c.r.ReadAt(p[:n], int64(l.off+addr-l.vaddr)); uint64(got) != n {
			return false
		}
		p, addr = p[n:], addr+n
	}
	return true
}

// SegmentAt returns the bounds of the PT_LOAD segment holding addr.
func (c *File) SegmentAt(addr uint64) (start, end uint64, ok bool) {
	i := sort.Search(len(c.loads), func(i int) bool { return c.loads[i].vaddr+c.loads[i].memsz > addr })
	if i < len(c.loads) && c.loads[i].vaddr <= addr {
		return c.loads[i].vaddr, c.loads[i].vaddr + c.loads[i].memsz, true
	}
	return 0, 0, false
}

// MappingAt returns the NT_FILE mapping holding addr.
func (c *File) MappingAt(addr uint64) (unwind.Mapping, bool) {
	for _, m := range c.Mappings {
		if addr >= m.Start && addr < m.End {
			return m, true
		}
	}
	return unwind.Mapping{}, false
}

// VDSO returns the vDSO's ELF image, read from the core's memory at
// AT_SYSINFO_EHDR, and its load address.
func (c *File) VDSO() (*elf.File, uint64, error) {
	base, ok := c.Aux(AtSysinfoEHdr)
	if !ok || base == 0 {
		return nil, 0, errors.New("no AT_SYSINFO_EHDR")
	}
	_, end, ok := c.SegmentAt(base)
	if !ok {
		return nil, 0, fmt.Errorf("vDSO at %#x is not in the core", base)
	}
	img := make([]byte, end-base)
	if err := c.ReadAt(img, base); err != nil {
		return nil, 0, err
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, 0, fmt.Errorf("vDSO: %w", err)
	}
	return f, base, nil
}

// Snapshot captures the stack of thread t as an unwind.Snapshot: its
// registers and the memory from its stack pointer up to the end of the
// segment holding it, at most max bytes (all of it if max <= 0).
func (c *File) Snapshot(t Thread, max int) (*unwind.Snapshot, error) {
	sp := t.Regs.SP + t.Regs.SSBase
	_, end, ok := c.SegmentAt(sp)
	if !ok {
		return nil, fmt.Errorf("stack pointer %#x is in no segment", sp)
	}
	n := end - sp
	if max > 0 && uint64(max) < n {
		n = uint64(max)
	}
	data := make([]byte, n)
	if err := c.ReadAt(data, sp); err != nil {
		return nil, err
	}
	return &unwind.Snapshot{
		Regs:  t.Regs,
		Stack: unwind.Segments{{Addr: sp, Data: data}},
		Maps:  append([]unwind.Mapping(nil), c.Mappings...),
	}, nil
}
