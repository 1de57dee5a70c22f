package gitdb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// pack is a packfile and its version-2 index, both read in place with
// pread: the index is binary-searched, never decoded whole.
type pack struct {
	idxPath, packPath string
	opened            bool
	err               error
	idx               *os.File    // the .idx, read with pread: the fan-out
	fanout            [256]uint32 // table once, then one bucket of names a lookup
	idxSize           int64
	names             []byte   // the bucket last read (reused)
	n                 int      // objects
	f                 *os.File // the .pack, read with pread (mapping it
	size              int64    // would count every page touched, and the
	// kernel's fault-around pages beside them, in the resident set)
}

const (
	idxHeader  = 8
	fanoutSize = 256 * 4
)

// open opens the index and the pack and checks that they belong together
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
	idx, err := os.Open(p.idxPath)
	if err != nil {
		return err
	}
	p.idx = idx
	st, err := idx.Stat()
	if err != nil {
		return err
	}
	p.idxSize = st.Size()
	min := int64(idxHeader + fanoutSize + 40)
	var ihead [idxHeader + fanoutSize]byte
	if p.idxSize < min {
		return fmt.Errorf("%s: not a version 2 pack index (or truncated)", p.idxPath)
	}
	if _, err := idx.ReadAt(ihead[:], 0); err != nil {
		return fmt.Errorf("%s: %v", p.idxPath, err)
	}
	if !bytes.Equal(ihead[:4], []byte("\377tOc")) || binary.BigEndian.Uint32(ihead[4:]) != 2 {
		return fmt.Errorf("%s: not a version 2 pack index", p.idxPath)
	}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(ihead[idxHeader+4*i:])
		if i > 0 && p.fanout[i] < p.fanout[i-1] {
			return fmt.Errorf("%s: non-monotonic fan-out table", p.idxPath)
		}
	}
	n := int(p.fanout[255])
	need := min + int64(n)*(20+4+4)
	if p.idxSize < need || (p.idxSize-need)%8 != 0 {
		return fmt.Errorf("%s: index of %d objects has a wrong size (%d bytes)", p.idxPath, n, p.idxSize)
	}
	p.n = n
	var idxTail [40]byte
	if _, err := idx.ReadAt(idxTail[:], p.idxSize-40); err != nil {
		return fmt.Errorf("%s: %v", p.idxPath, err)
	}
	f, err := os.Open(p.packPath)
	if err != nil {
		return fmt.Errorf("pack of index %s: %v", p.idxPath, err)
	}
	p.f = f
	pst, err := f.Stat()
	if err != nil {
		return err
	}
	p.size = pst.Size()
	var phead [12]byte
	var tail [20]byte
	if p.size < 32 {
		return fmt.Errorf("%s: not a pack, or truncated (%d bytes)", p.packPath, p.size)
	}
	if _, err := f.ReadAt(phead[:], 0); err != nil {
		return fmt.Errorf("%s: %v", p.packPath, err)
	}
	if _, err := f.ReadAt(tail[:], p.size-20); err != nil {
		return fmt.Errorf("%s: %v", p.packPath, err)
	}
	if !bytes.Equal(phead[:4], []byte("PACK")) {
		return fmt.Errorf("%s: not a pack (no PACK header)", p.packPath)
	}
	if v := binary.BigEndian.Uint32(phead[4:]); v != 2 && v != 3 {
		return fmt.Errorf("%s: pack version %d", p.packPath, v)
	}
	if c := int(binary.BigEndian.Uint32(phead[8:])); c != n {
		return fmt.Errorf("%s: holds %d objects, its index %d", p.packPath, c, n)
	}
	if !bytes.Equal(tail[:], idxTail[:20]) {
		return fmt.Errorf("%s is truncated or does not match its index %s (%d bytes; its checksum differs)", p.packPath, p.idxPath, p.size)
	}
	return nil
}

func (p *pack) close() {
	if p.idx != nil {
		p.idx.Close()
	}
	if p.f != nil {
		p.f.Close()
	}
	p.idx, p.f = nil, nil
}

// bucket reads the names of the objects whose first byte is b, and
// returns them with the index of the first.
func (p *pack) bucket(b byte) ([]byte, int, error) {
	lo := 0
	if b > 0 {
		lo = int(p.fanout[b-1])
	}
	hi := int(p.fanout[b])
	n := (hi - lo) * 20
	if cap(p.names) < n {
		p.names = make([]byte, n)
	}
	names := p.names[:n]
	if _, err := p.idx.ReadAt(names, int64(idxHeader+fanoutSize+lo*20)); err != nil {
		return nil, 0, fmt.Errorf("%w: %s: %v", ErrDamaged, p.idxPath, err)
	}
	return names, lo, nil
}

// lookup binary-searches the index for h.
func (p *pack) lookup(h Hash) (int64, bool, error) {
	if err := p.open(); err != nil {
		return 0, false, err
	}
	names, first, err := p.bucket(h[0])
	if err != nil {
		return 0, false, err
	}
	i, found := sort.Find(len(names)/20, func(i int) int { return bytes.Compare(h[:], names[i*20:i*20+20]) })
	if !found {
		return 0, false, nil
	}
	off, err := p.offset(first + i)
	return off, err == nil, err
}

func (p *pack) offset(i int) (int64, error) {
	base := int64(idxHeader+fanoutSize) + int64(p.n)*24
	var b [8]byte
	if _, err := p.idx.ReadAt(b[:4], base+int64(i)*4); err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrDamaged, p.idxPath, err)
	}
	v := binary.BigEndian.Uint32(b[:4])
	if v&0x80000000 == 0 {
		return int64(v), nil
	}
	large := base + int64(p.n)*4 + int64(v&0x7fffffff)*8
	if large+8 > p.idxSize-40 {
		return 0, fmt.Errorf("%w: %s: bad large offset", ErrDamaged, p.idxPath)
	}
	if _, err := p.idx.ReadAt(b[:], large); err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrDamaged, p.idxPath, err)
	}
	return int64(binary.BigEndian.Uint64(b[:])), nil
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
	names, _, err := p.bucket(b0[0])
	if err != nil {
		return err
	}
	for i := 0; i+20 <= len(names) && limit > 0; i += 20 {
		if strings.HasPrefix(hex.EncodeToString(names[i:i+20]), prefix) {
			var h Hash
			copy(h[:], names[i:i+20])
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
// readPacked reads the object at off of a pack: its file f, as find
// found it, packSize bytes long.
func (r *objReader) readPacked(f *os.File, packSize, off int64, depth int) (Type, []byte, error) {
	if depth > 10000 {
		return 0, nil, errors.New("delta chain too long (a cycle?)")
	}
	end := packSize - 20
	if off < 12 || off >= end {
		return 0, nil, fmt.Errorf("offset %d outside the pack", off)
	}
	// The entry's header: type and size, then a delta's base (at most
	// 10 + 20 bytes).
	var hdr [40]byte
	hn, err := f.ReadAt(hdr[:min(int64(len(hdr)), end-off)], off)
	if err != nil && err != io.EOF {
		return 0, nil, fmt.Errorf("at offset %d: %v", off, err)
	}
	h := hdr[:hn]
	i := 0
	next := func() (byte, bool) {
		if i >= len(h) {
			return 0, false
		}
		i++
		return h[i-1], true
	}
	c, _ := next()
	t := Type(c >> 4 & 7)
	size := int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		var ok bool
		if c, ok = next(); !ok || shift > 60 {
			return 0, nil, fmt.Errorf("bad object header at offset %d", off)
		}
		size |= int64(c&0x7f) << shift
	}
	switch t {
	case Commit, Tree, Blob, Tag:
		data, err := r.inflate(r.stream(f, off+int64(i), end), size)
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
	if t == ofsDelta {
		c, ok := next()
		rel := int64(c & 0x7f)
		for ok && c&0x80 != 0 {
			if c, ok = next(); rel > 1<<50 {
				ok = false
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if !ok || rel <= 0 || rel > off {
			return 0, nil, fmt.Errorf("bad delta base offset at offset %d", off)
		}
		bt, base, err = r.readPacked(f, packSize, off-rel, depth+1)
	} else {
		if i+20 > len(h) {
			return 0, nil, fmt.Errorf("bad delta at offset %d", off)
		}
		var bh Hash
		copy(bh[:], h[i:i+20])
		i += 20
		bt, base, err = r.read(bh)
	}
	if err != nil {
		return 0, nil, err
	}
	delta, err := r.inflate(r.stream(f, off+int64(i), end), size)
	if err != nil {
		return 0, nil, fmt.Errorf("delta at offset %d: %v", off, err)
	}
	out, err := applyDelta(base, delta)
	if err != nil {
		return 0, nil, fmt.Errorf("delta at offset %d: %v", off, err)
	}
	return bt, out, nil
}

// stream returns a buffered reader of the pack file f from pos to end
// (the buffer is the reader's, reused).
func (r *objReader) stream(f *os.File, pos, end int64) io.Reader {
	sr := io.NewSectionReader(f, pos, end-pos)
	if r.br == nil {
		r.br = bufio.NewReaderSize(sr, 16<<10)
	} else {
		r.br.Reset(sr)
	}
	return r.br
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
