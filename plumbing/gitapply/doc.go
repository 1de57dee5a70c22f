// Package gitapply applies a parsed patch (the files of one mail, as
// github.com/bluekeyes/go-gitdiff parses them) to a tree as git apply 2.39
// does, and says what git would say.
//
// The rules are git's (apply.c):
//
//   - A hunk is placed at the line its header gives (the new side's
//     start, which counts the hunks before it) or, when its old lines are
//     not there, at the nearest place they are, searching one line after,
//     then one before, then two after, and so on (an offset). There is no
//     fuzz: every context and removed line must be there byte for byte
//     (git apply without --whitespace=fix, -C or --ignore-whitespace), and
//     a hunk cannot match lines an earlier hunk of the file wrote. A hunk
//     that starts at the file's first line must match there; one without
//     trailing context must match at the end of the file. "\ No newline at
//     end of file" is honoured on both sides.
//   - A file the patch creates must not exist; one it changes, deletes,
//     renames, copies or changes the mode of must exist; a deletion must
//     leave nothing (its content must be the patch's preimage); a rename or
//     copy must not land on an existing file (unless the patch removes
//     it). A path that git's verify_path refuses ("..", ".git", an
//     absolute path, an empty component) stops the whole patch before
//     anything is applied ("invalid path").
//   - A binary patch is checked by blob ids: it needs full ids on its
//     index line, the file must have the old one, and the result of its
//     data must have the new one; the repository's objects are not looked
//     up, so a patch without data ("Binary files differ") does not apply.
//
// With Options.Reject a file whose hunks do not all apply still gets the
// ones that do (git apply --reject); with Options.Reverse the patch is
// applied backwards (git apply -R). A patch that does not apply but that
// git apply -R --check takes is a result of its own: the tree already has
// it (Result.AlreadyApplied). Result.Log gives git's
// messages ("error: patch failed: FILE:LINE", "Hunk #2 succeeded at 120
// (offset 4 lines).", "Rejected hunk #1."), with Options.Index in the words
// of git apply --index, which git am runs ("does not exist in index").
//
// The differential tests compare every result and message with the real
// git apply on generated patches and trees.
package gitapply
