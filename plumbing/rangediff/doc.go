// Package rangediff compares two versions of a patch series the way git
// range-diff does (git 2.39, no color): every patch is turned into the text
// range-diff compares (its author, its commit message and its diff, with
// " ## path ##" file headers and "@@ path: function" hunk headers), patches
// with the same diff are paired first, the rest are paired by a minimum-cost
// assignment where the cost of a pair is the size of the diff between the
// two texts and leaving a patch unpaired costs 60% of its own size (git's
// --creation-factor default), and the result is printed as git does: one
// "N:  commit = N:  commit subject" line per pair ('=' identical, '!' changed,
// followed by the diff of the two texts indented by four spaces; '<' a
// patch only the old series has, '>' one only the new series has), in the
// order of the new series, with dropped patches shown once their
// predecessors have been.
//
// Ties are broken as git breaks them: equal diffs are paired in the order
// git's hash map yields them, and the assignment is git's own
// Jonker-Volgenant algorithm, step for step. Authors are shown as git am
// records them from a From: header (quotes removed) and mapped through a
// .mailmap when one is given.
//
// Time is quadratic in the number of patches, as git's is; memory is
// linear except for the costs between patches that have no exact match.
// DiffContext stops when its context is done.
package rangediff
