// Package mail reads a posted patch series into structured patches, and
// writes patches as git format-patch does. It reads a directory of git
// format-patch files, an mbox (git format-patch --stdout, b4 mbox, or a
// thread saved from a list archive, mboxrd quoting undone, gzip-compressed
// or not), or a thread saved as text the way lore-style archives render it
// (the form of the v11 seed; see ParseThread); bodies are decoded as git am
// decodes them (quoted-printable, base64, multipart, ISO-8859-1). It is what kpatch series import, kpatch series
// diff, kpatch trailers and kpatch verify read.
//
// A patch is a message whose subject starts with "[PATCH ... m/n]"
// (any tag: RFC, v12, a subsystem) with m > 0; the m = 0 message is the
// cover letter; every other message is a reply. Its commit message is what
// git am would record: the subject without the bracketed prefix, a blank
// line, and the body up to the "---" line, without an in-body "From:"
// line, which names the author instead. Its diff is parsed with go-gitdiff.
//
// Every message keeps where it was read (file, first line, subject line and
// its text there), so that what reads a patch (kpatch verify) can point at
// lines of the mail. Input that is not a series (not mail, no patches, a
// patch cut short, patches missing, a commit message that is not UTF-8)
// is an error of one line naming the file, the line where one message is
// at fault, and what to give instead.
package mail
