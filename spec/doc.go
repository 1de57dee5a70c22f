// Package spec reads a series description: the revisions of a patch series,
// their patches (subject, author, commit message, changelog, edits to files
// of the kernel tree) and the templates of the files the series creates.
//
// A spec is a directory (an fs.FS; kpatch embeds templates/linux):
//
//	files/<path>.tmpl   one template per file the series creates
//	v11/series          the revision: header fields, a blank line, the cover letter
//	v11/01-<id>.patch   one description per patch, in order
//
// # Revision header
//
// The "series" file starts with "Key: value" lines: Version, Base (the kernel
// revision the revision was posted against), Subject (the cover letter's),
// From (the sender), Date (of the cover letter; patch N is dated N seconds
// later), Message-Id-Domain, Change-Id, To and Cc (recipients named by the
// series, besides those found in MAINTAINERS). Everything after the first
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
//
// # Edits
//
// An edit is a line "@ PATH: OP ARGS..." followed by the text it inserts,
// one "+"-prefixed line per line. Each edit is placed by what it attaches
// to, never by line number; see package hooks for the operations.
package spec
