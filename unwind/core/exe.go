package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// ExeMismatchError says that an executable is not the program whose
// process dumped the core: its symbols would name the wrong functions.
type ExeMismatchError struct {
	Exe string // the executable given
	// CoreExe is the core's executable as NT_FILE names it ("" when the
	// core does not say).
	CoreExe string
	Reason  string // what differs
	// Present says that CoreExe exists (under the core's Root), so that
	// leaving the executable out reads the program from there.
	Present bool
}

// Error says which file does not match, why, and what to give instead.
func (e *ExeMismatchError) Error() string {
	what := "give the program that dumped the core"
	switch {
	case e.Present:
		what = fmt.Sprintf("give the program that dumped the core (%s), or leave --exe out to read it from there", e.CoreExe)
	case e.CoreExe != "":
		what = fmt.Sprintf("give the program that dumped the core (%s)", e.CoreExe)
	}
	return fmt.Sprintf("executable %s is not the program of this core: %s; %s", e.Exe, e.Reason, what)
}

// ExeUnverifiedError says that the core holds too little to tell whether
// an executable is its program; the symbols may be wrong.
type ExeUnverifiedError struct {
	Exe, CoreExe string
	Reason       string
}

// Error says what could not be checked.
func (e *ExeUnverifiedError) Error() string {
	core := "the core's program"
	if e.CoreExe != "" {
		core = fmt.Sprintf("the core's program (%s)", e.CoreExe)
	}
	return fmt.Sprintf("cannot tell whether executable %s is %s: %s; function names may be wrong", e.Exe, core, e.Reason)
}

const pageSize = 4096

// CheckExe checks that the ELF executable at path is the program whose
// process dumped the core, before its symbols are used: it returns nil
// when it is, an *ExeMismatchError when it is not, an *ExeUnverifiedError
// when the core holds too little to tell, or the error opening it.
//
// The evidence, strongest first: the GNU build ids of the executable and
// of the program's ELF image in the core's memory (the first page of a
// file mapping, which gdb's gcore and the kernel both dump); without build
// ids, their ELF and program headers; then AT_ENTRY against the
// executable's entry point after the load bias that the core's NT_FILE
// mappings imply, and every NT_FILE mapping of the program against the
// executable's PT_LOAD segments; last the mapped file's name.
func (c *File) CheckExe(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("executable: %w", err)
	}
	defer f.Close()
	mismatch := func(coreExe, format string, args ...any) error {
		e := &ExeMismatchError{Exe: path, CoreExe: coreExe, Reason: fmt.Sprintf(format, args...)}
		if coreExe != "" {
			_, err := os.Stat(filepath.Join(c.Root, coreExe))
			e.Present = err == nil
		}
		return e
	}
	entry, hasEntry := c.Aux(AtEntry)
	coreExe, maps, imgAt := c.program()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return mismatch(coreExe, "it is %v, not an executable", f.Type)
	}
	if want := map[int]elf.Machine{8: elf.EM_X86_64, 4: elf.EM_386}[c.word]; f.Machine != want {
		return mismatch(coreExe, "it is for %v, the core for %v", f.Machine, want)
	}
	img, imgOK := c.memImage(imgAt)

	exeID := buildID(f)
	if imgOK && img.buildID != nil {
		switch {
		case exeID == nil:
			return mismatch(coreExe, "it has no build id, the core's program has %x", img.buildID)
		case !bytes.Equal(exeID, img.buildID):
			return mismatch(coreExe, "its build id is %x, the core's program has %x", exeID, img.buildID)
		}
		return nil
	}
	if imgOK && exeID != nil {
		return mismatch(coreExe, "its build id is %x, the core's program has none", exeID)
	}
	if imgOK {
		// Neither has a build id: compare the first page, headers and
		// all, which is never written to.
		page := make([]byte, len(img.page))
		if n, _ := readFileAt(path, page); n != len(page) || !bytes.Equal(page, img.page) {
			return mismatch(coreExe, "neither has a build id, and its first %d bytes (ELF header, program headers and what follows them) differ from the core's program's", len(page))
		}
		return nil
	}

	if !hasEntry {
		return &ExeUnverifiedError{Exe: path, CoreExe: coreExe, Reason: "the core has no build id and no AT_ENTRY"}
	}
	// The load bias the mappings imply, and AT_ENTRY against it.
	var bias uint64
	if f.Type == elf.ET_DYN {
		bias = entry - f.Entry
		var first *elf.Prog
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && (first == nil || p.Vaddr < first.Vaddr) {
				first = p
			}
		}
		if imgAt != 0 && first != nil && len(maps) > 0 {
			bias = imgAt - first.Vaddr&^(pageSize-1)
		}
	}
	if f.Entry+bias != entry {
		if f.Type == elf.ET_DYN {
			return mismatch(coreExe, "its entry point %#x is %#x at the load bias %#x, AT_ENTRY says %#x", f.Entry, f.Entry+bias, bias, entry)
		}
		return mismatch(coreExe, "its entry point is %#x, AT_ENTRY says %#x", f.Entry, entry)
	}
	for _, i := range maps {
		m := c.Mappings[i]
		if !segmentMaps(f, m.Start, m.Offset, bias) {
			return mismatch(coreExe, "the core maps %s at %#x (file offset %#x), where no segment of it is at load bias %#x", coreExe, m.Start, m.Offset, bias)
		}
	}
	if coreExe == "" {
		return &ExeUnverifiedError{Exe: path, Reason: "the core holds neither its program's first page (with the build id) nor an NT_FILE mapping of it"}
	}
	// The file the core maps, if it is still there, vouches for a copy
	// of itself.
	mapped := filepath.Join(c.Root, coreExe)
	fi, err1 := os.Stat(path)
	mi, err2 := os.Stat(mapped)
	if err1 == nil && err2 == nil && os.SameFile(fi, mi) {
		return nil
	}
	if mf, err := elf.Open(mapped); err == nil {
		id := buildID(mf)
		mf.Close()
		if id != nil && bytes.Equal(id, exeID) {
			return nil
		}
	}
	if filepath.Base(coreExe) == filepath.Base(path) {
		return nil
	}
	return &ExeUnverifiedError{Exe: path, CoreExe: coreExe, Reason: "the core does not hold its program's first page (with the build id), and the entry point and segments match, but the names differ"}
}

// segmentMaps reports whether a file mapping at start of file offset off
// is part of a PT_LOAD segment of f loaded at bias.
func segmentMaps(f *elf.File, start, off, bias uint64) bool {
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || off < p.Off&^(pageSize-1) || off >= p.Off+max(p.Filesz, 1) {
			continue
		}
		if start-off == bias+p.Vaddr-p.Off {
			return true
		}
	}
	return false
}

// image is what the core's memory holds of a loaded ELF file: its first
// page, as far as its first segment holds file bytes (the ELF header and
// the program header table at least), and its build id (nil if none was
// found).
type image struct {
	page    []byte
	buildID []byte
}

// memImage reads the ELF image loaded at addr from the core's own bytes.
func (c *File) memImage(addr uint64) (image, bool) {
	var img image
	if addr == 0 {
		return img, false
	}
	var ident [elf.EI_NIDENT]byte
	if !c.readDumped(ident[:], addr) || string(ident[:4]) != elf.ELFMAG {
		return img, false
	}
	var phoff, phnum, phentsize uint64
	ehsize := 52
	if c.word == 8 {
		ehsize = 64
	}
	hdr := make([]byte, ehsize)
	if !c.readDumped(hdr, addr) {
		return img, false
	}
	if c.word == 8 {
		var h elf.Header64
		binary.Read(bytes.NewReader(hdr), c.order, &h)
		phoff, phnum, phentsize = h.Phoff, uint64(h.Phnum), uint64(h.Phentsize)
	} else {
		var h elf.Header32
		binary.Read(bytes.NewReader(hdr), c.order, &h)
		phoff, phnum, phentsize = uint64(h.Phoff), uint64(h.Phnum), uint64(h.Phentsize)
	}
	if phoff > pageSize || phnum > pageSize || phentsize > 64 {
		return img, false
	}
	head := make([]byte, phoff+phnum*phentsize)
	if !c.readDumped(head, addr) {
		return img, false
	}
	type seg struct{ typ, off, vaddr, filesz, align uint64 }
	var segs []seg
	first := ^uint64(0)
	for i := uint64(0); i < phnum; i++ {
		r := bytes.NewReader(head[phoff+i*phentsize:])
		var s seg
		if c.word == 8 {
			var p elf.Prog64
			binary.Read(r, c.order, &p)
			s = seg{uint64(p.Type), p.Off, p.Vaddr, p.Filesz, p.Align}
		} else {
			var p elf.Prog32
			binary.Read(r, c.order, &p)
			s = seg{uint64(p.Type), uint64(p.Off), uint64(p.Vaddr), uint64(p.Filesz), uint64(p.Align)}
		}
		if elf.ProgType(s.typ) == elf.PT_LOAD {
			first = min(first, s.vaddr&^(pageSize-1))
			if s.off == 0 {
				n := max(uint64(len(head)), min(s.filesz, pageSize))
				img.page = make([]byte, n)
				if !c.readDumped(img.page, addr) {
					img.page = head
				}
			}
		}
		segs = append(segs, s)
	}
	if first == ^uint64(0) {
		return img, false
	}
	if img.page == nil {
		img.page = head
	}
	bias := addr - first
	for _, s := range segs {
		if elf.ProgType(s.typ) != elf.PT_NOTE || s.filesz > 1<<16 {
			continue
		}
		data := make([]byte, s.filesz)
		if c.readDumped(data, bias+s.vaddr) {
			if id := noteBuildID(data, c.order, s.align); id != nil {
				img.buildID = id
			}
		}
	}
	return img, true
}

// buildID returns the GNU build id of f, or nil.
func buildID(f *elf.File) []byte {
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<16 {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			continue
		}
		if id := noteBuildID(data, f.ByteOrder, p.Align); id != nil {
			return id
		}
	}
	return nil
}

// noteBuildID finds the NT_GNU_BUILD_ID note in the notes data, whose
// entries are aligned to align bytes (4 or 8).
func noteBuildID(data []byte, order binary.ByteOrder, align uint64) []byte {
	const ntGNUBuildID = 3
	if align != 8 {
		align = 4
	}
	up := func(n uint64) uint64 { return (n + align - 1) &^ (align - 1) }
	for off := uint64(0); off+12 <= uint64(len(data)); {
		namesz := uint64(order.Uint32(data[off:]))
		descsz := uint64(order.Uint32(data[off+4:]))
		typ := order.Uint32(data[off+8:])
		desc := off + 12 + up(namesz)
		if namesz > 1<<16 || descsz > 1<<16 || desc+descsz > uint64(len(data)) {
			return nil
		}
		if typ == ntGNUBuildID && string(data[off+12:off+12+namesz]) == "GNU\x00" && descsz > 0 {
			return append([]byte(nil), data[desc:desc+descsz]...)
		}
		off = desc + up(descsz)
	}
	return nil
}

// readFileAt reads the first len(p) bytes of the file at path.
func readFileAt(path string, p []byte) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.ReadAt(p, 0)
}

// program finds the program in the core: the file NT_FILE maps at
// AT_ENTRY and the indexes of its mappings in c.Mappings (none when the
// core does not say), and the address of its ELF image: at the mapping of
// file offset 0, else the page holding AT_PHDR (0 when unknown).
func (c *File) program() (path string, maps []int, imgAt uint64) {
	if entry, ok := c.Aux(AtEntry); ok {
		if m, ok := c.MappingAt(entry); ok {
			path = m.Path
			for i, x := range c.Mappings {
				if x.Path == path {
					maps = append(maps, i)
					if x.Offset == 0 {
						imgAt = x.Start
					}
				}
			}
		}
	}
	if phdr, ok := c.Aux(AtPhdr); imgAt == 0 && ok {
		imgAt = phdr &^ (pageSize - 1)
	}
	return path, maps, imgAt
}

// BuildID returns the GNU build id of the program in the core's memory, in
// hex, or "" when the core does not hold it.
func (c *File) BuildID() string {
	_, _, at := c.program()
	img, ok := c.memImage(at)
	if !ok {
		return ""
	}
	return hex.EncodeToString(img.buildID)
}
