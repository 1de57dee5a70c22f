// Package spec reads a series description: the revisions of a patch series,
// their patches (subject, author, commit message, changelog, edits to files
// of the kernel tree) and the templates of the files the series creates.
//
// A spec is a directory (an fs.FS; kpatch embeds templates/linux):
//
//	files/<path>.tmpl   one template per file the series creates
//	v11/series          the revision: header fields, a blank line, the cover letter
//	v11/01-<id>.patch   one description per patch, in order
//	v12/...             the next revision, complete in itself
//
// # Revisions
//
// Every revision directory holds all of its patches. A patch that a later
// revision drops is simply absent from that revision's directory; a new
// patch gets a new id and its number in the new order (v12 inserts
// 11-used-bit.patch and renumbers what follows). Templates are shared by
// all revisions: a guard on a patch id that the rendered revision does not
// have is false for since and between and true for before, so v11 renders
// as if the USED bit never existed. Content that differs between revisions
// for the same patch is guarded by the version:
//
//	{{if lt .Version 12}}   v11's text
//	{{else}}                v12's text
//	{{end}}
//
// An id that no revision has is still an error.
//
// # Revision header
//
// The "series" file starts with "Key: value" lines: Version, Base (the kernel
// revision the revision was posted against), Subject (the cover letter's),
// From (the sender), Date (of the cover letter; patch N is dated N seconds
// later), Message-Id-Domain, Change-Id, To and Cc (recipients named by the
// series, besides those found in MAINTAINERS), and Selftest-Cases (the
// self-test cases beyond the default list that the revision must pass, e.g.
// faultable_sync once the USED bit fixes it). Everything after the first
// blank line is the cover letter text, ending before the shortlog and
// diffstat that kpatch adds.
//
// # Patch descriptions
//
// A patch file is mail-like: "Author:" and "Subject:" header lines, a blank
// line, the commit message with its trailers, then optionally a line "---"
// followed by the changelog that goes below the "---" of the mail, then
// optionally a line "=== edits" followed by the edits to existing files.
// The id of the patch is its file name without the number and ".patch"
// (01-user-api.patch is "user-api"). Ids, not numbers, name patches in
// templates, so that a later revision can insert or split patches.
//
// # Templates
//
// Templates use text/template with these functions, and fail on an unknown
// patch id or a missing key:
//
//	{{created "id"}}        the file exists from patch "id" on (first line)
//	{{if since "id"}}       true once patch "id" is applied
//	{{if before "id"}}      true until patch "id" is applied
//	{{if between "a" "b"}}  true from patch "a" until patch "b" is applied
//	{{.Step}}, {{.Patch}}   the number and id of the last applied patch
//	{{.Version}}            the revision being rendered (see Revisions)
//
// # Edits
//
// An edit is a line "@ PATH: OP ARGS..." followed by the text it inserts,
// one "+"-prefixed line per line. Each edit is placed by what it attaches
// to, never by line number; see package hooks for the operations.
package spec
