// Package mail reads a posted patch series into structured patches the way
// git am (git mailsplit and git mailinfo) reads it, and writes patches as
// git format-patch does. It is what kpatch verify, kpatch series import,
// kpatch series diff and kpatch trailers read, and what kpatch gen writes
// with. docs/mail.md says in full what is read and refused.
//
// It reads a directory of mail files (git format-patch's .patch, .eml, b4's
// .mbx and .cover), an mbox (git format-patch --stdout, b4 am and b4 mbox,
// lore's t.mbox.gz; mboxrd quoting undone where the separator says
// mboxrd), a single mail with or without its leading "From " line, or a
// thread saved as text the way lore-style archives render it (the form of
// the v11 seed; see ParseThread). Bodies are decoded as git mailinfo
// decodes them: quoted-printable, base64, ISO-8859-1, and every text part
// of a multipart mail in order (a diff sent as an attachment).
//
// A patch is a message that is not a reply ("Re:") whose subject has a
// "[PATCH ...]" prefix (any tags: RFC, v12, a subsystem), or has none but
// whose body holds a diff (git format-patch -k); a numbered "0/n" message
// is the cover letter; every other message is a reply. Numbered patches
// are put in the order of their numbers and must be 1..n, each once;
// unnumbered ones (git format-patch -N, single patches) are taken in the
// order given, as git am applies them. A patch's commit message is what
// git am records: the subject without "Re:" and the bracketed prefix
// (ParseSubject, the one subject parser), a blank line, and the body up to
// the "---" line, cleaned as git stripspace cleans it, without the in-body
// headers git mailinfo takes (From:, Subject: and Date: lines at the
// start of the body, which name the author, the title and the author
// date instead). Its diff is parsed with go-gitdiff after its hunk
// headers are checked as git apply checks them.
//
// Every message keeps where it was read (file, first line, subject line and
// its text there), so that what reads a patch (kpatch verify) can point at
// lines of the mail. Input that is not a series (not mail, UTF-16, no
// patches, a patch cut short, a corrupt hunk header, numbers missing,
// repeated or beyond the total, a commit message that is not UTF-8) is an
// error of one line naming the file, the line where one message is at
// fault, and what to give instead, and no package of kpatch.
//
// Writing: FormatPatch (a Header and a Body) writes one patch as git
// format-patch writes it, addresses as git's pretty.c writes them
// (ParseAddress, NormalizeAddress); Series.WriteDir writes a series read
// here back as format-patch files.
package mail
