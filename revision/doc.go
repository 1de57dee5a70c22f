// Package revision starts the next revision of a series in a copy of its
// description (see package spec), as b4 prep --reroll does for a branch:
// the newest revision's series file and patch descriptions are copied to
// v<N+1>/, the version is bumped, the base recorded, and the cover letter
// and every patch's notes get an empty "Changes since vN:" section whose
// link names the previous posting by the Message-Id it was posted with
// (the Message-Ids kpatch send records in its header; a patch whose id is
// not known is linked by the cover letter's). The new cover letter is
// dated now unless told otherwise. The maintainer then edits templates,
// notes and the list of changes.
package revision
