// Package ktap parses KTAP (Kernel Test Anything Protocol) output, as
// printed on a kernel console by KUnit or by kpatch's unwinder self-test
// driver, into a tree of tests.
//
// It works on a saved console log and needs no kernel tree. Like the
// kernel's kunit.py, it reads a stream of numbered lines, strips the
// printk timestamp ("[    1.234567] ") and whatever prefix precedes the
// first "KTAP version" line, and never gives up on malformed input:
// problems (a missing plan, a wrong test count, out-of-order numbers, a
// test that never reports) are recorded on the test they concern, in
// Test.Problems, and counted by Test.ProblemCount. Lines that are not
// KTAP (other kernel messages) are kept in the log of the test they
// appear in.
//
// The grammar accepted, with nesting by indentation:
//
//	KTAP version 1            (or TAP version 13/14)
//	1..N                      plan
//	    KTAP version 1        a subtest block, more indented
//	    # Subtest: name       optional
//	    1..M
//	    ok 1 leaf
//	ok 1 name                 the subtest's own result, at the parent's level
//	not ok 2 other # SKIP why result with directive
//	# text                    diagnostic, kept on the next result's test
package ktap
