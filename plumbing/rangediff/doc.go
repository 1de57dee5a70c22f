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
// Ties in the assignment are broken by the Hungarian algorithm, not by
// git's Jonker-Volgenant implementation; they only matter for patches that
// are equally far from two others.
package rangediff
