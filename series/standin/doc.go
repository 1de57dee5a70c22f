// Package standin reads what a revision of a series uses from its base tree
// that older bases lack (the spec's facts/base.tmpl: "SYMBOL: HEADER SINCE
// NAME=REPLACEMENT ...") and gives the test builds a stand-in for it, so that
// a revision written against a newer kernel builds and boots on the tree the
// maintainer tests on: v14's srcu_lite guard needs srcu_read_lock_lite(),
// which Linux has from v6.13 on, and Debian's 6.12 tree does not.
//
// A stand-in is "#define NAME REPLACEMENT" lines at the top of HEADER in the
// files a test build syncs into its source tree; it is never part of what
// gen writes or verify reads, and kpatch test says which stand-ins a build
// used. A base whose HEADER mentions SYMBOL gets none.
package standin
