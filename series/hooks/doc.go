// Package hooks places a series' edits into files that already exist in the
// kernel tree by what they attach to, never by line number or fuzzy context:
// a Kconfig entry after a named symbol, a select in sorted order inside a
// named config, a line in sorted order among lines with a prefix, a
// MAINTAINERS section in sorted order, an #include after a named include, a
// statement before a named statement inside a named function, a struct
// member before a named member, a declaration after a named function, and a
// function moved to another file under a new name with its calls renamed.
//
// # Changing lines
//
// An edit that changes lines of the tree rather than adding some
// (replace-block, replace-range, insert-before-block, substitute; block.go)
// attaches to those lines themselves: whole lines, or a piece of one,
// found once in a named function or, for "-", in the file. Their text is
// what goes in their place (none removes them). stable-replace-block is
// for a fix that stable trees carry: on a base that has the text already
// it leaves the file as it is (Stable), so that the patch is empty there
// rather than refused.
//
// # Sorted placement
//
// Kernel lists are often sorted only in runs (x86's select list in Linux
// 6.12 is), so "before the first greater entry" is not where a
// maintainer puts an entry. select-sorted, sorted-line and section place a
// new entry X between its alphabetical neighbours: the adjacent pair of
// entries a < X < b that is nearest to X by name. The list is read with a
// sentinel before its first entry and one after its last, so a pair always
// brackets X. Of the pairs that do, the nearest has the fewest entries of
// the list whose names sort strictly between a and b (none when a and b are
// X's predecessor and successor in the whole list); a tie goes to the pair
// whose a or b shares the longest prefix with X, then to the first pair in
// the file. X goes right before b (and the comment lines right above b), or
// after the last entry when b is the end sentinel. In a sorted list that is
// before the first greater entry; when no two entries bracket X (the list
// descends around it, "C B A" for "AB"), X goes at the start or the end of
// the list, whichever of the two sentinel pairs is nearer. Names compare
// byte-wise; MAINTAINERS titles compare case-insensitively, and the
// sections end at THE REST.
//
// An anchor that is missing, or that matches more than once, is an
// *AnchorError (matching ErrAnchorMissing or ErrAnchorAmbiguous with
// errors.Is) naming the file and the anchor. The lines it names are
// numbered as the base tree numbers them when the Files implements
// BaseLines, not shifted by earlier edits. For a missing anchor it lists
// the lines of the file most like it (Candidates): the statements of the
// function, the includes of the file, the Kconfig symbols, the functions,
// the struct members. Adds tells whether an edit's text provides another
// edit's anchor, so that an edit missing its anchor only because an
// earlier one could not be placed can say so.
package hooks
