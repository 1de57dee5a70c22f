// Package trailers collects the trailers that replies to a posted series
// give, every person trailer b4 trailers -u collects (Acked-by,
// Reviewed-by, Tested-by, Reported-by, Suggested-by) and the links (Closes,
// Link), each with its provenance (the reply's Message-Id, sender and
// date), and adds them to the patch descriptions of a spec copy, as b4
// trailers -u does for a branch.
//
// A reply's target is found by its In-Reply-To chain up to a "[PATCH m/n]"
// message, or, for a thread saved without headers, by its own "Re: [PATCH
// vN m/n] title" subject. A target patch is matched to a patch of the spec
// revision by patch-id (git patch-id --stable, when its diff is at hand and
// the revision was generated against a tree) or else by subject. A reply
// to the cover letter (m = 0) applies to every patch. Quoted lines ("> ")
// never count, and a trailer a patch already has is not added again, so a
// second run adds nothing.
//
// A person trailer must name one person with one mail address ("Name
// <user@host>" or user@host); one without an address, with two, or with
// "<not-an-email>" is left out and reported (Given.Invalid, Invalid), and
// so is a Link or Closes trailer that is not one http(s) URL.
// Write changes every patch description of the copy or none (package
// outdir's ReplaceFiles); the caller holds the copy's lock
// (outdir.LockEdit) from before it reads the descriptions, so that two
// runs on one copy add both their trailers.
package trailers
