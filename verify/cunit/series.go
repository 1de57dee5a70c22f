package cunit

import (
	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/kernelsrc"
)

// Series is what the front end reads of a patch series: the content of
// every file it touches after every patch (patch 0: the base), and what
// each patch changes.
type Series interface {
	// FileAt returns path after patch n; ok is false when the file is
	// absent or its content unknown.
	FileAt(path string, n int) (content []byte, ok bool)
	// Version returns the last patch up to n that changes path, or 0
	// (the base) when none does.
	Version(path string, n int) int
	// Created reports whether the series creates path.
	Created(path string) bool
	// Changes returns the patches that change path, in order.
	Changes(path string) []int
	// Paths returns every path the series changes, sorted.
	Paths() []string
	// Change returns the change patch n makes to path, or nil.
	Change(n int, path string) *Change
	// Tree returns the base tree, or nil when none was given.
	Tree() *kernelsrc.Tree
}

// Change is what one patch does to one file.
type Change struct {
	Known   bool   // New is the content after the patch
	Deleted bool   // the patch deletes the file
	New     []byte // the content after the patch, when Known
	Added   []Line // the added lines, numbered in the new file
	Removed []Line // the removed lines, numbered in the old file
	// NewSide and OldSide are the lines the hunks show on each side,
	// context included (but not context preprocessor lines), numbered in
	// the new and the old file.
	NewSide, OldSide []Line
}

// Line is one line of a file.
type Line struct {
	N    int
	Text string
}

// Tree is a configured kernel object tree (make O=DIR, prepared) the C
// files are preprocessed in, as kbuild compiles them there.
type Tree struct {
	Name string // the configuration: "x86_64"
	Src  string // the source tree it builds
	Arch string // cc/v4's: "amd64", "386"
	Bits int    // BITS_PER_LONG
	Key  []byte // what identifies the tree's own inputs (paths, base, .config)
	// Command returns the compile command a C file (a path of the source
	// tree) is preprocessed with and the object whose command it is, or
	// why there is none.
	Command func(path string) (cmd *kbuild.CompileCommand, from string, err error)
	// Laid returns the files an earlier kpatch test build laid over the
	// tree's source (the base's versions stand in for them).
	Laid func() []string
}
