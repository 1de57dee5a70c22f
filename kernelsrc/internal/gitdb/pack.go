package gitdb

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// pack is a packfile and its version-2 index, both mapped read-only and
// looked up in place: the index is binary-searched, never decoded whole.
type pack struct {
	idxPath, packPath string
	opened            bool
	err               error
	idx               []byte // the whole .idx
	n                 int    // objects
	data              []byte // the whole .pack
}

const (
	idxHeader  = 8
	fanoutSize = 256 * 4
)

// mapFile maps a file read-only (or reads it when it cannot be mapped).
func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, nil
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%d bytes: too large to map", size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return os.ReadFile(path)
	}
	return b, nil
}

// open maps the index and the pack and checks that they belong together
// (as git does before using a pack): the index's header and size, the
// pack's header, object count and trailing checksum, which the index
// records, so that a truncated or replaced pack is caught here.
func (p *pack) open() error {
	if p.opened {
		return p.err
	}
	p.opened = true
	p.err = p.open1()
	if p.err != nil {
		p.err = fmt.Errorf("%w: %v", ErrDamaged, p.err)
	}
	return p.err
}

func (p *pack) open1() error {
	idx, err := mapFile(p.idxPath)
	if err != nil {
		return err
	}
	p.idx = idx
	min := idxHeader + fanoutSize + 40
	if len(idx) < min || !bytes.Equal(idx[:4], []byte("\377tOc")) || binary.BigEndian.Uint32(idx[4:]) != 2 {
		return fmt.Errorf("%s: not a version 2 pack index (or truncated)", p.idxPath)
	}
	n := int(binary.BigEndian.Uint32(idx[idxHeader+fanoutSize-4:]))
	need := min + n*(20+4+4)
	if len(idx) < need || (len(idx)-need)%8 != 0 {
		return fmt.Errorf("%s: index of %d objects has a wrong size (%d bytes)", p.idxPath, n, len(idx))
	}
	p.n = n
	data, err := mapFile(p.packPath)
	if err != nil {
		return fmt.Errorf("pack of index %s: %v", p.idxPath, err)
	}
	p.data = data
	if len(data) < 32 || !bytes.Equal(data[:4], []byte("PACK")) {
		return fmt.Errorf("%s: not a pack, or truncated (%d bytes)", p.packPath, len(data))
	}
	if v := binary.BigEndian.Uint32(data[4:]); v != 2 && v != 3 {
		return fmt.Errorf("%s: pack version %d", p.packPath, v)
	}
	if c := int(binary.BigEndian.Uint32(data[8:])); c != n {
		return fmt.Errorf("%s: holds %d objects, its index %d", p.packPath, c, n)
	}
	if !bytes.Equal(data[len(data)-20:], idx[len(idx)-40:len(idx)-20]) {
		return fmt.Errorf("%s is truncated or does not match its index %s (%d bytes; its checksum differs)", p.packPath, p.idxPath, len(data))
	}
	return nil
}

func (p *pack) close() {
	if len(p.idx) > 0 {
		syscall.Munmap(p.idx)
	}
	if len(p.data) > 0 {
		syscall.Munmap(p.data)
	}
	p.idx, p.data = nil, nil
}

func (p *pack) name(i int) []byte {
	o := idxHeader + fanoutSize + i*20
	return p.idx[o : o+20]
}

// lookup binary-searches the index for h.
func (p *pack) lookup(h Hash) (int64, bool, error) {
	if err := p.open(); err != nil {
		return 0, false, err
	}
	lo, hi := p.fanoutRange(h[0])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(p.name(m), h[:]); {
		case c == 0:
			off, err := p.offset(m)
			return off, err == nil, err
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false, nil
}

// fanoutRange returns the index range of names starting with byte b.
func (p *pack) fanoutRange(b byte) (int, int) {
	hi := int(binary.BigEndian.Uint32(p.idx[idxHeader+int(b)*4:]))
	lo := 0
	if b > 0 {
		lo = int(binary.BigEndian.Uint32(p.idx[idxHeader+int(b-1)*4:]))
	}
	if hi > p.n {
		hi = p.n
	}
	if lo > hi {
		lo = hi
	}
	return lo, hi
}

func (p *pack) offset(i int) (int64, error) {
	base := idxHeader + fanoutSize + p.n*24
	v := binary.BigEndian.Uint32(p.idx[base+i*4:])
	if v&0x80000000 == 0 {
		return int64(v), nil
	}
	large := base + p.n*4 + int(v&0x7fffffff)*8
	if large+8 > len(p.idx)-40 {
		return 0, fmt.Errorf("%w: %s: bad large offset", ErrDamaged, p.idxPath)
	}
	return int64(binary.BigEndian.Uint64(p.idx[large:])), nil
}

// findPrefix calls add for every object whose hex id starts with prefix.
func (p *pack) findPrefix(prefix string, limit int, add func(Hash)) error {
	if err := p.open(); err != nil {
		return err
	}
	b0, err := hex.DecodeString(prefix[:2])
	if err != nil {
		return nil
	}
	lo, hi := p.fanoutRange(b0[0])
	for i := lo; i < hi && limit > 0; i++ {
		if strings.HasPrefix(hex.EncodeToString(p.name(i)), prefix) {
			var h Hash
			copy(h[:], p.name(i))
			add(h)
			limit--
		}
	}
	return nil
}

// Pack entry types beyond the object types.
const (
	ofsDelta = 6
	refDelta = 7
)

// readPacked reads the object at off, resolving deltas.
func (db *DB) readPacked(p *pack, off int64, depth int) (Type, []byte, error) {
	if depth > 10000 {
		return 0, nil, errors.New("delta chain too long (a cycle?)")
	}
	end := int64(len(p.data) - 20)
	if off < 12 || off >= end {
		return 0, nil, fmt.Errorf("offset %d outside the pack", off)
	}
	pos := off
	c := p.data[pos]
	pos++
	t := Type(c >> 4 & 7)
	size := int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if pos >= end || shift > 60 {
			return 0, nil, fmt.Errorf("bad object header at offset %d", off)
		}
		c = p.data[pos]
		pos++
		size |= int64(c&0x7f) << shift
	}
	switch t {
	case Commit, Tree, Blob, Tag:
		data, err := db.inflate(bytes.NewReader(p.data[pos:end]), size)
		if err != nil {
			return 0, nil, fmt.Errorf("at offset %d: %v", off, err)
		}
		return t, data, nil
	case ofsDelta, refDelta:
	default:
		return 0, nil, fmt.Errorf("unknown object type %d at offset %d", t, off)
	}
	var bt Type
	var base []byte
	var err error
	if t == ofsDelta {
		if pos >= end {
			return 0, nil, fmt.Errorf("bad delta at offset %d", off)
		}
		c = p.data[pos]
		pos++
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if pos >= end || rel > 1<<50 {
				return 0, nil, fmt.Errorf("bad delta at offset %d", off)
			}
			c = p.data[pos]
			pos++
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if rel <= 0 || rel > off {
			return 0, nil, fmt.Errorf("bad delta base offset at offset %d", off)
		}
		bt, base, err = db.readPacked(p, off-rel, depth+1)
	} else {
		if pos+20 > end {
			return 0, nil, fmt.Errorf("bad delta at offset %d", off)
		}
		var bh Hash
		copy(bh[:], p.data[pos:pos+20])
		pos += 20
		bt, base, err = db.read(bh)
	}
	if err != nil {
		return 0, nil, err
	}
	delta, err := db.inflate(bytes.NewReader(p.data[pos:end]), size)
	if err != nil {
		return 0, nil, fmt.Errorf("delta at offset %d: %v", off, err)
	}
	out, err := applyDelta(base, delta)
	if err != nil {
		return 0, nil, fmt.Errorf("delta at offset %d: %v", off, err)
	}
	return bt, out, nil
}

// applyDelta applies a git delta to base.
func applyDelta(base, delta []byte) ([]byte, error) {
	varint := func() (int, bool) {
		v, shift := 0, 0
		for {
			if len(delta) == 0 || shift > 56 {
				return 0, false
			}
			c := delta[0]
			delta = delta[1:]
			v |= int(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				return v, true
			}
		}
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != len(base) {
		return nil, errors.New("delta does not fit its base")
	}
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		if op&0x80 != 0 {
			var off, n int
			for i := 0; i < 4; i++ {
				if op&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated delta")
					}
					off |= int(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := 0; i < 3; i++ {
				if op&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated delta")
					}
					n |= int(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > len(base) || len(out)+n > dstSize {
				return nil, errors.New("delta copies outside its base")
			}
			out = append(out, base[off:off+n]...)
		} else if op != 0 {
			n := int(op)
			if n > len(delta) || len(out)+n > dstSize {
				return nil, errors.New("truncated delta")
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		} else {
			return nil, errors.New("delta opcode 0")
		}
	}
	if len(out) != dstSize {
		return nil, errors.New("delta gives a wrong size")
	}
	return out, nil
}
