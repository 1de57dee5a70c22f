package linediff

import (
	"bytes"
	"hash/maphash"
	"math"
)

// Tuning constants of xdiff's Myers implementation (xdiff/xdiffi.h,
// xdiff/xprepare.c). They determine which of several equally long edit
// scripts is produced, so they must match git's values exactly.
const (
	maxEqLimit   = 1024 // XDL_MAX_EQLIMIT: cap on the "many matches" limit
	simscanWin   = 100  // XDL_SIMSCAN_WINDOW: window of xdl_clean_mmatch
	kpdisRun     = 4    // XDL_KPDIS_RUN
	maxCostMin   = 256  // XDL_MAX_COST_MIN
	heurMinCost  = 256  // XDL_HEUR_MIN_COST
	snakeCnt     = 20   // XDL_SNAKE_CNT
	kHeur        = 4    // XDL_K_HEUR
	lineMaxValue = math.MaxInt
)

// side holds one input of a diff: its lines, their equivalence classes and
// the per-line change marks, plus the reduced view that the Myers search
// works on.
//
// Only the lines between the common prefix and suffix of the two inputs
// (the middle) are split up front, with a few around them; the others are
// split when first asked for (line), so that a large file with a small
// change (MAINTAINERS: 25,000 lines) costs a search for its first and last
// differing bytes, not a slice entry per line.
type side struct {
	data  []byte
	nl    int      // number of lines in data
	off   int      // line number of lines[0]
	lo    int      // byte offset of lines[0] in data
	hi    int      // byte offset just past the last line in lines
	lines [][]byte // the split lines off..off+len(lines)-1, each including its trailing '\n' if any
	// class holds the equivalence class of each middle line
	// (dstart..dend); every other line has class -1, which same
	// compares by content.
	class []int
	// chg has n()+2 entries; chg[i+1] != 0 marks line i as changed.
	// chg[0] and chg[n()+1] are sentinels that stay zero.
	chg []byte

	dstart, dend int   // range left after trimming common prefix/suffix
	rindex       []int // reduced index -> line index
	ha           []int // reduced index -> class
}

func (s *side) n() int { return s.nl }

// changed reports whether line i (which may be -1 or n) is marked changed.
func (s *side) changed(i int) bool { return s.chg[i+1] != 0 }

// line returns line i (0 <= i < n()), including its '\n' if any.
func (s *side) line(i int) []byte {
	if j := i - s.off; j >= 0 && j < len(s.lines) {
		return s.lines[j]
	}
	s.extend(i)
	return s.lines[i-s.off]
}

// cls returns the equivalence class of line i, -1 outside the middle.
func (s *side) cls(i int) int {
	if i >= s.dstart && i <= s.dend {
		return s.class[i-s.dstart]
	}
	return -1
}

// extend splits more lines so that line i is among s.lines: at least as
// many again as s.lines holds, so that a walk away from the middle splits
// O(n) lines in all.
func (s *side) extend(i int) {
	grow := max(len(s.lines), 64)
	if i < s.off {
		first := max(0, min(i, s.off-grow))
		pos := s.lo
		for k := s.off; k > first; k-- {
			pos = bytes.LastIndexByte(s.data[:pos-1], '\n') + 1
		}
		more := splitLines(s.data[pos:s.lo])
		s.lines = append(more[:len(more):len(more)], s.lines...)
		s.off, s.lo = first, pos
		return
	}
	last := min(s.nl, max(i+1, s.off+len(s.lines)+grow))
	pos := s.hi
	for k := s.off + len(s.lines); k < last; k++ {
		if j := bytes.IndexByte(s.data[pos:], '\n'); j >= 0 {
			pos += j + 1
		} else {
			pos = len(s.data)
		}
	}
	s.lines = append(s.lines, splitLines(s.data[s.hi:pos])...)
	s.hi = pos
}

// recordCount returns the number of records in data.
func recordCount(data []byte) int {
	if len(data) == 0 {
		return 0
	}
	n := bytes.Count(data, []byte{'\n'})
	if data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// splitLines cuts data into records the way xdiff does: every record ends
// after a '\n', and a final record may lack it.
func splitLines(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	return appendLines(make([][]byte, 0, recordCount(data)), data)
}

// appendLines appends the records of data to lines.
func appendLines(lines [][]byte, data []byte) [][]byte {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:i+1:i+1])
		data = data[i+1:]
	}
	return lines
}

// env is the state of one diff computation (xdfenv_t).
type env struct {
	a, b side
	sc   *scratch // the pooled memory the slices come from; nil after release
}

// bogosqrt is xdl_bogosqrt: a power of two close to sqrt(n).
func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// windowMargin is how many lines around the middle prepare splits up
// front: the context of the hunks and what the indent heuristic looks at
// usually lie within it.
const windowMargin = 24

// commonPrefix returns the length of the common prefix of a and b.
func commonPrefix(a, b []byte) int {
	const blk = 512
	n := min(len(a), len(b))
	i := 0
	for i+blk <= n && bytes.Equal(a[i:i+blk], b[i:i+blk]) {
		i += blk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns the length of the common suffix of a and b, at
// most limit.
func commonSuffix(a, b []byte, limit int) int {
	const blk = 512
	i := 0
	for i+blk <= limit && bytes.Equal(a[len(a)-i-blk:len(a)-i], b[len(b)-i-blk:len(b)-i]) {
		i += blk
	}
	for i < limit && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// prepare splits and classifies both inputs, then trims the common ends and
// discards lines that cannot match (xdl_prepare_env).
//
// Unlike xdiff it finds the common prefix and suffix lines first, by
// comparing bytes, and hashes only the lines between them: a large file
// with a small change (MAINTAINERS) costs a comparison of its bytes, not a
// hash-table entry per line. The result is the same: xdl_trim_ends trims
// exactly those lines, and the occurrence counts of the middle lines'
// classes, which decide what xdl_cleanup_records discards, include the
// prefix and suffix lines of the same content (found through a filter on
// their length and first byte, then looked up, never added).
func prepare(old, new []byte) *env {
	e := newEnv()
	sc := e.sc
	a, b := &e.a, &e.b
	a.data, b.data = old, new
	a.nl, b.nl = recordCount(old), recordCount(new)

	// The common prefix: the lines wholly inside the common bytes.
	p := commonPrefix(old, new)
	pre := bytes.Count(old[:p], []byte{'\n'})
	preEnd := bytes.LastIndexByte(old[:p], '\n') + 1 // byte offset of line pre, the same in both

	// The common suffix: the lines wholly inside the common trailing
	// bytes (not reaching into the prefix lines of either input) that
	// start at a line start in both.
	q := commonSuffix(old, new, min(len(old), len(new))-preEnd)
	suf := 0
	sufStart := len(old) // byte offset in old of the first suffix line
	if q > 0 {
		t := len(old) - q
		suf = bytes.Count(old[t:len(old)-1], []byte{'\n'})
		tb := len(new) - q
		if (t == 0 || old[t-1] == '\n') && (tb == 0 || new[tb-1] == '\n') {
			suf++
			sufStart = t
		} else if suf > 0 {
			sufStart = t + bytes.IndexByte(old[t:], '\n') + 1
		}
	}
	sufBytes := len(old) - sufStart

	// The window split up front: the middle and a margin around it.
	for k, s := range []*side{a, b} {
		midEnd := len(s.data) - sufBytes
		s.dstart, s.dend = pre, s.nl-suf-1
		s.off, s.lo, s.hi = pre, preEnd, midEnd
		for k := 0; k < windowMargin && s.off > 0; k++ {
			s.lo = bytes.LastIndexByte(s.data[:s.lo-1], '\n') + 1
			s.off--
		}
		for k := 0; k < windowMargin && s.hi < len(s.data); k++ {
			if j := bytes.IndexByte(s.data[s.hi:], '\n'); j >= 0 {
				s.hi += j + 1
			} else {
				s.hi = len(s.data)
			}
		}
		s.lines = appendLines(sc.lines[k][:0], s.data[s.lo:s.hi])
		s.chg = zeroed(sc.chg[k], s.nl+2)
		s.class, s.rindex, s.ha = sc.class[k][:0], sc.rindex[k][:0], sc.ha[k][:0]
	}
	na, nb := a.dend-a.dstart+1, b.dend-b.dstart+1
	if na == 0 || nb == 0 {
		// One side has no lines left: every line of the other is
		// changed, as xdl_cleanup_records finds (none has a match).
		// No line is classed: same compares them by content.
		for _, s := range []*side{a, b} {
			for i := s.dstart; i <= s.dend; i++ {
				s.chg[i+1] = 1
			}
			s.dstart, s.dend = 0, -1
		}
		return e
	}

	classes := sc.table.reset(na + nb)
	len1, len2 := sc.len1[:0], sc.len2[:0] // occurrences of each class in a and b
	var lenSeen [1 << 16 / 64]uint64
	filterKey := func(l []byte) int { return (len(l)*31 + int(l[0])) & (1<<16 - 1) }
	classify := func(s *side, counts *[]int) {
		s.class = resized(s.class, s.dend-s.dstart+1)
		for i := s.dstart; i <= s.dend; i++ {
			l := s.line(i)
			c, added := classes.add(l)
			if added {
				len1 = append(len1, 0)
				len2 = append(len2, 0)
				k := filterKey(l)
				lenSeen[k/64] |= 1 << (k % 64)
			}
			(*counts)[c]++
			s.class[i-s.dstart] = c
		}
	}
	classify(a, &len1)
	classify(b, &len2)
	// The common lines, the same in a and b, count for the middle
	// lines of the same content.
	countCommon := func(data []byte) {
		for len(data) > 0 {
			j := bytes.IndexByte(data, '\n') + 1
			if j == 0 {
				j = len(data)
			}
			l := data[:j]
			data = data[j:]
			if k := filterKey(l); lenSeen[k/64]&(1<<(k%64)) == 0 {
				continue
			}
			if c := classes.find(l); c >= 0 {
				len1[c]++
				len2[c]++
			}
		}
	}
	countCommon(old[:preEnd])
	countCommon(old[sufStart:])

	e.cleanupRecords(len1, len2)
	sc.len1, sc.len2 = len1, len2
	return e
}

// classTable gives every distinct line a class, numbered in the order of
// first appearance (xdiff's xdlclassifier_t): an open-addressing table of
// the lines' hashes, sized once for all the lines it may get.
type classTable struct {
	seed   maphash.Seed
	slots  []int32 // class+1, 0 for an empty slot
	mask   uint64
	hashes []uint64 // per class
	lines  [][]byte // per class
}

// reset empties t for up to n lines, reusing its memory, and returns it.
func (t *classTable) reset(n int) *classTable {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	t.slots, t.mask = zeroed(t.slots, size), uint64(size-1)
	t.hashes, t.lines = t.hashes[:0], t.lines[:0]
	return t
}

// lookup returns the class of l, or -1 and the empty slot it would take.
func (t *classTable) lookup(l []byte) (class int, slot uint64, h uint64) {
	h = maphash.Bytes(t.seed, l)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		c := t.slots[i]
		if c == 0 {
			return -1, i, h
		}
		if t.hashes[c-1] == h && bytes.Equal(t.lines[c-1], l) {
			return int(c - 1), i, h
		}
	}
}

// find returns the class of l, -1 if it has none.
func (t *classTable) find(l []byte) int {
	c, _, _ := t.lookup(l)
	return c
}

// add returns the class of l, giving it a new one if it has none (added).
func (t *classTable) add(l []byte) (class int, added bool) {
	c, slot, h := t.lookup(l)
	if c >= 0 {
		return c, false
	}
	c = len(t.lines)
	t.lines = append(t.lines, l)
	t.hashes = append(t.hashes, h)
	t.slots[slot] = int32(c + 1)
	return c, true
}

// same reports whether lines i and j of s are equal.
func (s *side) same(i, j int) bool {
	ci, cj := s.cls(i), s.cls(j)
	if ci < 0 || cj < 0 {
		return bytes.Equal(s.line(i), s.line(j))
	}
	return ci == cj
}

// cleanupRecords builds the reduced line lists that the Myers search runs
// on, marking lines without any counterpart, and lines with many
// counterparts that sit among such lines, as changed right away
// (xdl_cleanup_records).
func (e *env) cleanupRecords(len1, len2 []int) {
	a, b := &e.a, &e.b

	mark := func(s *side, other []int, buf []byte) []byte {
		dis := resized(buf, s.dend-s.dstart+1)
		mlim := min(bogosqrt(s.n()), maxEqLimit)
		for i := range dis {
			nm := other[s.class[i]]
			switch {
			case nm == 0:
				dis[i] = 0
			case nm >= mlim:
				dis[i] = 2
			default:
				dis[i] = 1
			}
		}
		return dis
	}
	dis1 := mark(a, len2, e.sc.dis[0])
	dis2 := mark(b, len1, e.sc.dis[1])
	e.sc.dis[0], e.sc.dis[1] = dis1, dis2

	// dis is indexed from s.dstart.
	reduce := func(s *side, dis []byte) {
		cnt := len(dis)
		if cap(s.rindex) < cnt {
			s.rindex = make([]int, 0, cnt)
		}
		if cap(s.ha) < cnt {
			s.ha = make([]int, 0, cnt)
		}
		for k := range dis {
			if dis[k] == 1 || (dis[k] == 2 && !cleanMmatch(dis, k, 0, cnt-1)) {
				s.rindex = append(s.rindex, s.dstart+k)
				s.ha = append(s.ha, s.class[k])
			} else {
				s.chg[s.dstart+k+1] = 1
			}
		}
	}
	reduce(a, dis1)
	reduce(b, dis2)
}

// cleanMmatch decides whether the multi-match line i is surrounded by
// enough unmatched lines to be discarded (xdl_clean_mmatch).
func cleanMmatch(dis []byte, i, s, e int) bool {
	if i-s > simscanWin {
		s = i - simscanWin
	}
	if e-i > simscanWin {
		e = i + simscanWin
	}

	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*kpdisRun < rpdis1+rdis1
}

// myers holds the state shared by the recursive Myers search
// (xdalgoenv_t plus the K vectors).
type myers struct {
	ha1, ha2 []int
	rchg1    []byte
	rchg2    []byte
	rindex1  []int
	rindex2  []int
	kf, kb   []int // forward and backward furthest-reaching vectors
	koff     int   // offset of diagonal 0 inside kf and kb
	mxcost   int
	snakeCnt int
	heurMin  int
}

// split is the result of one middle-snake search (xdpsplit_t).
type split struct {
	i1, i2       int
	minLo, minHi bool
}

// diff runs the Myers search over the reduced line lists (xdl_do_diff).
func (e *env) diff() {
	n1, n2 := len(e.a.ha), len(e.b.ha)
	ndiags := n1 + n2 + 3
	m := &myers{
		ha1:      e.a.ha,
		ha2:      e.b.ha,
		rchg1:    e.a.chg,
		rchg2:    e.b.chg,
		rindex1:  e.a.rindex,
		rindex2:  e.b.rindex,
		kf:       zeroed(e.sc.kf, ndiags),
		kb:       zeroed(e.sc.kb, ndiags),
		koff:     n2 + 1,
		mxcost:   max(bogosqrt(ndiags), maxCostMin),
		snakeCnt: snakeCnt,
		heurMin:  heurMinCost,
	}
	m.compare(0, n1, 0, n2, false)
	e.sc.kf, e.sc.kb = m.kf, m.kb
}

// compare is xdl_recs_cmp: it marks the changed lines between the reduced
// ranges [off1,lim1) and [off2,lim2).
func (m *myers) compare(off1, lim1, off2, lim2 int, needMin bool) {
	ha1, ha2 := m.ha1, m.ha2
	for off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2] {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && ha1[lim1-1] == ha2[lim2-1] {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			m.rchg2[m.rindex2[off2]+1] = 1
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			m.rchg1[m.rindex1[off1]+1] = 1
		}
	default:
		spl := m.split(off1, lim1, off2, lim2, needMin)
		m.compare(off1, spl.i1, off2, spl.i2, spl.minLo)
		m.compare(spl.i1, lim1, spl.i2, lim2, spl.minHi)
	}
}

// split is xdl_split: it finds the middle snake of the box
// [off1,lim1)x[off2,lim2), or, when the search becomes too expensive, a
// good-enough split point chosen by xdiff's heuristics.
func (m *myers) split(off1, lim1, off2, lim2 int, needMin bool) split {
	ha1, ha2 := m.ha1, m.ha2
	ko := m.koff
	kf, kb := m.kf, m.kb
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid

	kf[fmid+ko] = off1
	kb[bmid+ko] = lim1

	for ec := 1; ; ec++ {
		gotSnake := false

		// Extend the forward diagonal domain by one in each direction,
		// or shrink it where it would leave the box.
		if fmin > dmin {
			fmin--
			kf[fmin-1+ko] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			kf[fmax+1+ko] = -1
		} else {
			fmax--
		}

		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if kf[d-1+ko] >= kf[d+1+ko] {
				i1 = kf[d-1+ko] + 1
			} else {
				i1 = kf[d+1+ko]
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2] {
				i1++
				i2++
			}
			if i1-prev1 > m.snakeCnt {
				gotSnake = true
			}
			kf[d+ko] = i1
			if odd && bmin <= d && d <= bmax && kb[d+ko] <= i1 {
				return split{i1: i1, i2: i2, minLo: true, minHi: true}
			}
		}

		// Same for the backward search.
		if bmin > dmin {
			bmin--
			kb[bmin-1+ko] = lineMaxValue
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			kb[bmax+1+ko] = lineMaxValue
		} else {
			bmax--
		}

		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if kb[d-1+ko] < kb[d+1+ko] {
				i1 = kb[d-1+ko]
			} else {
				i1 = kb[d+1+ko] - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && ha1[i1-1] == ha2[i2-1] {
				i1--
				i2--
			}
			if prev1-i1 > m.snakeCnt {
				gotSnake = true
			}
			kb[d+ko] = i1
			if !odd && fmin <= d && d <= fmax && i1 <= kf[d+ko] {
				return split{i1: i1, i2: i2, minLo: true, minHi: true}
			}
		}

		if needMin {
			continue
		}

		// Past the heuristic threshold, accept a diagonal that has
		// made good progress and ends in a long enough snake.
		if gotSnake && ec > m.heurMin {
			best := 0
			var spl split
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				i1 := kf[d+ko]
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > kHeur*ec && v > best &&
					off1+m.snakeCnt <= i1 && i1 < lim1 &&
					off2+m.snakeCnt <= i2 && i2 < lim2 {
					for k := 1; ha1[i1-k] == ha2[i2-k]; k++ {
						if k == m.snakeCnt {
							best = v
							spl.i1, spl.i2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				spl.minLo, spl.minHi = true, false
				return spl
			}

			best = 0
			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				i1 := kb[d+ko]
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > kHeur*ec && v > best &&
					off1 < i1 && i1 <= lim1-m.snakeCnt &&
					off2 < i2 && i2 <= lim2-m.snakeCnt {
					for k := 0; ha1[i1+k] == ha2[i2+k]; k++ {
						if k == m.snakeCnt-1 {
							best = v
							spl.i1, spl.i2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				spl.minLo, spl.minHi = false, true
				return spl
			}
		}

		// Too expensive: take the furthest reaching path found so far.
		if ec >= m.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(kf[d+ko], lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1, i2 = lim2+d, lim2
				}
				if fbest < i1+i2 {
					fbest, fbest1 = i1+i2, i1
				}
			}
			bbest, bbest1 := lineMaxValue, lineMaxValue
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, kb[d+ko])
				i2 := i1 - d
				if i2 < off2 {
					i1, i2 = off2+d, off2
				}
				if i1+i2 < bbest {
					bbest, bbest1 = i1+i2, i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return split{i1: fbest1, i2: fbest - fbest1, minLo: true, minHi: false}
			}
			return split{i1: bbest1, i2: bbest - bbest1, minLo: false, minHi: true}
		}
	}
}
