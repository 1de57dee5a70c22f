package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// TruncatedError reports a core file that ends before the bytes its
// headers describe: the dump was cut short. Part names what is missing:
// "the ELF header", "the program header table", "segment N" (a program
// header, then Index, Type and Vaddr say which) or "the section header
// table".
type TruncatedError struct {
	Part  string
	Index int          // the program header's index, for a segment
	Type  elf.ProgType // the segment's type
	Vaddr uint64       // the segment's address in the dumped process
	// Off and End are the file offsets of the bytes the part needs,
	// Size the size of the file.
	Off, End, Size int64
	// Later is how many more segments after this one are cut off too.
	Later int
}

// Error says what is cut short, where the file should end and where it
// does end, and what to do.
func (e *TruncatedError) Error() string {
	part, later := e.Part, ""
	if e.Part == "segment" {
		part = fmt.Sprintf("segment %d (PT_LOAD at vaddr %#x)", e.Index, e.Vaddr)
		if e.Type != elf.PT_LOAD {
			part = fmt.Sprintf("segment %d (%v)", e.Index, e.Type)
		}
		if e.Later > 0 {
			later = fmt.Sprintf(", and %d later segments are cut off too", e.Later)
		}
	}
	return fmt.Sprintf("core truncated: %s needs file bytes %#x-%#x, but the file has %#x (%d bytes)%s: the dump was cut short (core size limit, full disk or an interrupted copy); dump the process again",
		part, e.Off, e.End, e.Size, e.Size, later)
}

// readerSize returns the size of r when r can tell it.
func readerSize(r io.ReaderAt) (int64, bool) {
	switch v := r.(type) {
	case interface{ Size() int64 }:
		return v.Size(), true
	case interface{ Stat() (os.FileInfo, error) }:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false
		}
		return fi.Size(), true
	}
	return 0, false
}

// checkSize checks that a file of size bytes holds everything its ELF
// header, program headers and section header table describe, and returns a
// *TruncatedError for the first part that runs past its end. Problems
// other than the size are left to debug/elf.
func checkSize(r io.ReaderAt, size int64) error {
	var ident [elf.EI_NIDENT]byte
	if size < int64(len(ident)) {
		return &TruncatedError{Part: "the ELF header", End: int64(len(ident)), Size: size}
	}
	if _, err := r.ReadAt(ident[:], 0); err != nil {
		return nil
	}
	var order binary.ByteOrder
	switch elf.Data(ident[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		order = binary.BigEndian
	default:
		return nil
	}
	var (
		is64                      = elf.Class(ident[elf.EI_CLASS]) == elf.ELFCLASS64
		ehsize                    = int64(52)
		phoff, shoff              uint64
		phentsize, phnum, shentsz uint64
		shnum                     uint64
	)
	if is64 {
		ehsize = 64
	} else if elf.Class(ident[elf.EI_CLASS]) != elf.ELFCLASS32 {
		return nil
	}
	if size < ehsize {
		return &TruncatedError{Part: "the ELF header", End: ehsize, Size: size}
	}
	hdr := make([]byte, ehsize)
	if _, err := r.ReadAt(hdr, 0); err != nil {
		return nil
	}
	if is64 {
		var h elf.Header64
		binary.Read(bytes.NewReader(hdr), order, &h)
		phoff, shoff = h.Phoff, h.Shoff
		phentsize, phnum, shentsz, shnum = uint64(h.Phentsize), uint64(h.Phnum), uint64(h.Shentsize), uint64(h.Shnum)
	} else {
		var h elf.Header32
		binary.Read(bytes.NewReader(hdr), order, &h)
		phoff, shoff = uint64(h.Phoff), uint64(h.Shoff)
		phentsize, phnum, shentsz, shnum = uint64(h.Phentsize), uint64(h.Phnum), uint64(h.Shentsize), uint64(h.Shnum)
	}
	// Sizes the ELF header gets wrong, or extended numbering (PN_XNUM),
	// are debug/elf's to report.
	want := uint64(32)
	if is64 {
		want = 56
	}
	if phnum == 0xffff || phnum > 0 && phentsize != want || phoff > uint64(size)+1<<40 {
		return nil
	}
	if end := phoff + phnum*phentsize; end > uint64(size) {
		return &TruncatedError{Part: "the program header table", Off: int64(phoff), End: int64(end), Size: size}
	}
	var cut *TruncatedError
	ph := make([]byte, phentsize)
	for i := uint64(0); i < phnum; i++ {
		if _, err := r.ReadAt(ph, int64(phoff+i*phentsize)); err != nil {
			return nil
		}
		var typ elf.ProgType
		var off, vaddr, filesz uint64
		if is64 {
			var p elf.Prog64
			binary.Read(bytes.NewReader(ph), order, &p)
			typ, off, vaddr, filesz = elf.ProgType(p.Type), p.Off, p.Vaddr, p.Filesz
		} else {
			var p elf.Prog32
			binary.Read(bytes.NewReader(ph), order, &p)
			typ, off, vaddr, filesz = elf.ProgType(p.Type), uint64(p.Off), uint64(p.Vaddr), uint64(p.Filesz)
		}
		end := off + filesz
		if filesz == 0 || end <= uint64(size) || end < off {
			continue
		}
		if cut == nil || int64(off) < cut.Off {
			later := 0
			if cut != nil {
				later = cut.Later + 1
			}
			cut = &TruncatedError{Part: "segment", Index: int(i), Type: typ, Vaddr: vaddr, Off: int64(off), End: int64(end), Size: size, Later: later}
		} else {
			cut.Later++
		}
	}
	if cut != nil {
		return cut
	}
	if shnum > 0 && shoff > 0 {
		if end := shoff + shnum*shentsz; end > uint64(size) {
			return &TruncatedError{Part: "the section header table", Off: int64(shoff), End: int64(end), Size: size}
		}
	}
	return nil
}
