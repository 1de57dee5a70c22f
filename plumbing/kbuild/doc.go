// Package kbuild builds a Linux kernel out of tree for kpatch's tests.
//
// A build directory holds a source tree (Src, unpacked once from a git
// revision) and the make O= output (Obj). Sync lays files over the source
// tree, rewriting only the files whose content changed and restoring from
// the base revision those that an earlier Sync laid down but the current
// one does not, so that a second build with nothing changed recompiles
// nothing. Configure makes a tinyconfig, adds a fragment, runs
// olddefconfig and checks that required symbols came out as wanted,
// explaining from the Kconfig sources why one did not. Make runs make with
// a one-line progress display and, on failure, extracts the compiler's
// errors so that the caller can point at the patch that touched the file.
// ParseCmdFile reads what kbuild records for an object in its .cmd file
// (the compile command, the source, the dependencies fixdep listed and the
// configuration symbols among them); ScanObjects and ArchivedObjects read
// them for a whole object tree. ReadCompileCommand reads the compiler
// command of an object from it, and CompileCommand.Preprocess turns it into the
// command that preprocesses another content of that file (or of a file in
// the same directory) with the same flags, a directory of changed files
// laid over the source tree.
package kbuild
