// Package gitdb reads a git repository's objects and references, read-only,
// as git itself lays them out: loose objects, packs found through their .idx
// files (looked up in place, without decoding the whole index), object
// alternates (clones made with --shared or --reference), worktrees, loose
// and packed refs.
//
// It reads only what is asked for, so opening a repository costs a few
// system calls and reading a file of a tree costs the objects on its path.
// Every failure says whether the object is absent or the repository is
// damaged (a pack without an index, a truncated pack, an object that does
// not inflate or parse, unreadable alternates), naming the object and the
// file, as git fsck would: errors of the second kind match ErrDamaged.
package gitdb
