// Package cunit is verify's C front end: it reads a C file of a patch
// series, as the series stands after (or before) one patch, the way the
// rules on C need it, with modernc.org/cc/v4.
//
// A Unit is one file at one patch in one build (Env: x86_64 or i386, the
// series' options on or off): its function definitions with their storage
// class, kernel attributes (noinstr, __always_inline), parameters, calls
// and identifiers, its declarations, file-scope uses and macros, at the
// file's own lines. Given kernel build trees (Tree), a C file is read as
// the compiler reads it: preprocessed with the compile command kbuild
// recorded for it (or a sibling), the series' files at that patch laid
// over the tree, and the translation unit cut to the file's own chunks
// and the headers' typedefs and parsed by cc/v4 (kbuild.go). Without one,
// or where that fails, cc/v4 reads the file itself, the series' headers
// served with their declarations, every other kernel header empty and a
// prelude standing in for them (prelude.go, cc.go); of a file the series
// edits, only the definitions it touches are read.
//
// A Reader serves the units of one series (Series: the content of every
// file after every patch and what each patch changes), each read once;
// the prelude's units are shared in the process and, like the
// preprocessed ones, kept between runs in a cache directory (cache.go).
// Translate type checks a header with the prelude, for the checks that
// evaluate types and macro values (Functions, Values). Chunks cuts C
// lexically into its top-level definitions.
package cunit
