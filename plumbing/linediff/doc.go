// Package linediff computes line-based unified diffs that are byte-for-byte
// identical to the hunks written by git 2.39's "git diff" and
// "git format-patch" with their default settings.
//
// The implementation follows the structure of git's bundled xdiff library:
//
//   - the inputs are split into records (lines including their '\n') and
//     every distinct line gets an equivalence class;
//   - the common prefix and suffix are trimmed and lines that cannot be
//     part of a match (no counterpart in the other file, or many
//     counterparts inside runs of such lines) are discarded up front,
//     as xdl_cleanup_records does;
//   - the remaining lines are compared with Myers' O(ND) divide and conquer
//     algorithm including xdiff's cost-limiting heuristics;
//   - change groups are slid up and down and placed with git's
//     indent heuristic (diff.indentHeuristic=true, the default);
//   - changes are grouped into hunks with 3 lines of context, merging
//     changes that are at most 2*context lines apart, and each hunk header
//     carries git's default function name.
//
// Nothing here runs git; the tests compare the output with a real git
// binary when one is available.
package linediff
