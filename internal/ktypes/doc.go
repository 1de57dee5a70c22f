// Package ktypes holds the kernel's basic C types (size_t, the fixed-size
// integers s8..u64, bool with false and true), as <linux/types.h> gives
// them, for the translation units kpatch hands to modernc.org/cc/v4 in
// place of the kernel headers it does not read: package unwind's frame
// macro evaluator and package verify's C checks both start from them.
package ktypes
