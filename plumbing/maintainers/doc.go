// Package maintainers parses the Linux kernel MAINTAINERS file and computes
// the recipients of a patch the way scripts/get_maintainer.pl does with
// --no-git --no-git-fallback (no keyword or git history lookups). With
// [File.Mailmap] set, addresses are mapped through the tree's .mailmap as
// the script reads it; with [File.ReadFile] set, the addresses written in
// .yaml files (device-tree bindings) are added as the script adds them.
//
// # Matching
//
// A section matches a path when no X: pattern of the section matches it and
// at least one F: pattern or N: regex does. F: and X: patterns follow
// get_maintainer.pl exactly: "." is literal, "*" becomes ".*" and "?"
// becomes "." in a regular expression anchored only at the start, so other
// regular-expression syntax such as "[ch]" keeps its meaning. Then:
//
//   - a pattern ending in "/" matches every path below it, recursively
//     (a "*" in such a pattern may cross "/", as in get_maintainer.pl);
//   - any other pattern matches a path that it prefixes and that has the
//     same number of "/" as the pattern, so "*" and "?" never cross "/",
//     "dir/*" matches only files directly in dir, and, like
//     get_maintainer.pl, "arch/x86/Kconfig" also matches
//     "arch/x86/Kconfig.debug";
//   - a pattern without a trailing "/" that names a directory is treated as
//     if it had one. get_maintainer.pl asks the file system; this package
//     asks [File.IsDir] when it is set, and otherwise treats the pattern as a
//     directory when the path being matched lies below it (which is always
//     the case for a new file in a directory named by the pattern).
//
// N: values are Perl extended (/x) regular expressions matched anywhere in
// the path; they are compiled with package regexp after removing /x
// whitespace and comments.
//
// # Ordering
//
// For each path, in the order given, matching sections are ordered by the
// depth of the matching pattern, most specific first: the number of "/" in
// the last matching F: pattern of the section, plus one when the pattern does
// not end in "/"; 0 for an N: match; -1 for patterns starting with "*" (as in
// "THE REST"). get_maintainer.pl breaks ties in Perl hash order, which is
// random; this package breaks them by position in the file.
//
// Within a section, M: and R: entries (To) and L: entries (Cc) are taken in
// file order. An address is dropped when its name or its address, compared
// case-insensitively, was already taken, lists marked "subscribers-only" are
// skipped, and the chief penguin (Linus Torvalds) is removed from the To list
// as get_maintainer.pl does without --git-chief-penguins. Names are quoted
// when they contain characters other than ASCII letters, digits, "_", "-"
// and space, exactly as get_maintainer.pl prints them.
package maintainers
