package cpio

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// File mode type bits, as stored in the c_mode field of a newc header.
const (
	ModeDir     = 0o040000 // directory
	ModeRegular = 0o100000 // regular file
	ModeSymlink = 0o120000 // symbolic link
	ModeCharDev = 0o020000 // character device
)

// Writer writes a newc archive. The zero value is not usable; call
// NewWriter.
type Writer struct {
	w      io.Writer
	off    int64
	ino    uint32
	dirs   map[string]bool
	closed bool
}

// NewWriter returns a Writer that writes an archive to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, ino: 1, dirs: map[string]bool{".": true, "": true}}
}

// header is one newc record header.
type header struct {
	name      string
	mode      uint32
	size      int
	rdevMajor uint32
	rdevMinor uint32
	nlink     uint32
}

func (cw *Writer) write(h header, data []byte) error {
	if cw.closed {
		return errors.New("writing to a closed archive")
	}
	name := h.name + "\x00"
	ino := cw.ino
	cw.ino++
	if h.name == "TRAILER!!!" {
		ino = 0
	}
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, h.mode, 0, 0, h.nlink, 0, h.size, 0, 0, h.rdevMajor, h.rdevMinor, len(name), 0)
	if err := cw.emit([]byte(hdr + name)); err != nil {
		return err
	}
	if err := cw.pad(); err != nil {
		return err
	}
	if err := cw.emit(data); err != nil {
		return err
	}
	return cw.pad()
}

func (cw *Writer) emit(b []byte) error {
	n, err := cw.w.Write(b)
	cw.off += int64(n)
	if err != nil {
		return fmt.Errorf("writing the archive: %w", err)
	}
	return nil
}

func (cw *Writer) pad() error {
	if r := cw.off % 4; r != 0 {
		return cw.emit(make([]byte, 4-r))
	}
	return nil
}

// clean checks and normalizes an archive path: relative, slash-separated,
// without "." or ".." elements.
func clean(name string) (string, error) {
	n := strings.TrimPrefix(name, "/")
	if n == "" || path.Clean(n) != n || n == ".." || strings.HasPrefix(n, "../") {
		return "", fmt.Errorf("%q: not a path in an archive (relative, without . or ..)", name)
	}
	return n, nil
}

// mkdirs emits records for the missing parent directories of name.
func (cw *Writer) mkdirs(name string) error {
	dir := path.Dir(name)
	if cw.dirs[dir] {
		return nil
	}
	if err := cw.mkdirs(dir); err != nil {
		return err
	}
	cw.dirs[dir] = true
	return cw.write(header{name: dir, mode: ModeDir | 0o755, nlink: 2}, nil)
}

// Dir adds a directory with permission bits perm, and its parents.
func (cw *Writer) Dir(name string, perm uint32) error {
	n, err := clean(name)
	if err != nil {
		return err
	}
	if cw.dirs[n] {
		return nil
	}
	if err := cw.mkdirs(n); err != nil {
		return err
	}
	cw.dirs[n] = true
	return cw.write(header{name: n, mode: ModeDir | perm&0o7777, nlink: 2}, nil)
}

// File adds a regular file with permission bits perm and the given
// contents, and any missing parent directories.
func (cw *Writer) File(name string, perm uint32, data []byte) error {
	n, err := clean(name)
	if err != nil {
		return err
	}
	if err := cw.mkdirs(n); err != nil {
		return err
	}
	return cw.write(header{name: n, mode: ModeRegular | perm&0o7777, size: len(data), nlink: 1}, data)
}

// Symlink adds a symbolic link name pointing at target.
func (cw *Writer) Symlink(name, target string) error {
	n, err := clean(name)
	if err != nil {
		return err
	}
	if err := cw.mkdirs(n); err != nil {
		return err
	}
	return cw.write(header{name: n, mode: ModeSymlink | 0o777, size: len(target), nlink: 1}, []byte(target))
}

// CharDev adds a character device node, such as dev/console (5, 1).
func (cw *Writer) CharDev(name string, perm, major, minor uint32) error {
	n, err := clean(name)
	if err != nil {
		return err
	}
	if err := cw.mkdirs(n); err != nil {
		return err
	}
	return cw.write(header{name: n, mode: ModeCharDev | perm&0o7777, rdevMajor: major, rdevMinor: minor, nlink: 1}, nil)
}

// Close writes the trailer record. It does not close the underlying
// writer.
func (cw *Writer) Close() error {
	if cw.closed {
		return nil
	}
	err := cw.write(header{name: "TRAILER!!!", nlink: 1}, nil)
	cw.closed = true
	return err
}
