package linediff

import (
	"hash/maphash"
	"sync"
)

// scratch is the memory one diff works in: the split lines, change marks,
// classes and reduced lists of both sides, the class table and the Myers
// vectors. A series diffs every file of every patch, and each diff used
// to allocate all of it afresh and drop it at once (2 MB for the newest
// revision with its x86 series); kept in a pool between diffs, a process
// touches about as much as its largest diffs need. Nothing of it outlives
// the diff: the hunks and scripts returned are built from copies.
type scratch struct {
	lines  [2][][]byte
	chg    [2][]byte
	class  [2][]int
	dis    [2][]byte
	rindex [2][]int
	ha     [2][]int
	kf, kb []int
	len1   []int
	len2   []int
	table  classTable
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{table: classTable{seed: maphash.MakeSeed()}}
}}

// newEnv returns an env whose slices reuse pooled memory.
func newEnv() *env {
	return &env{sc: scratchPool.Get().(*scratch)}
}

// release returns the env's memory to the pool; e must not be used after.
// The lines that point into the diffed data are cleared, so the pool
// keeps no file alive.
func (e *env) release() {
	sc := e.sc
	if sc == nil {
		return
	}
	e.sc = nil
	for k, s := range []*side{&e.a, &e.b} {
		clear(s.lines[:cap(s.lines)])
		sc.lines[k] = s.lines[:0]
		sc.chg[k] = s.chg
		sc.class[k] = s.class
		sc.rindex[k] = s.rindex
		sc.ha[k] = s.ha
	}
	clear(sc.table.lines[:cap(sc.table.lines)])
	scratchPool.Put(sc)
}

// resized returns buf with length n, reusing its memory; the elements are
// left as they were (the caller writes every one).
func resized[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}

// zeroed returns buf with length n and every element zero, reusing its
// memory.
func zeroed[T any](buf []T, n int) []T {
	buf = resized(buf, n)
	clear(buf)
	return buf
}
