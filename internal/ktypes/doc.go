// Package ktypes holds the prelude kpatch gives modernc.org/cc/v4 in place
// of the kernel headers it does not read, shared by package unwind's frame
// macro evaluator and package verify's C checks (the headers it type
// checks, and the units of the rules on function bodies): the kernel's
// basic C types (size_t, the fixed-size integers s8..u64, bool with false
// and true) as <linux/types.h> gives them, the annotations that change
// nothing cc/v4 reads, and noinstr and __always_inline.
package ktypes
