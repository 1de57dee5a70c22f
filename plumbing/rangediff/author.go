package rangediff

import (
	"mime"
	"strings"

	"kpatch/plumbing/ident"
)

// authorLine returns the "Name <address>" that git range-diff shows for a
// patch's author: the mailbox as git am records it from a From: header
// (RFC 2047 words decoded, quotes and backslash escapes removed,
// "address (Name)" turned around),
// then mapped through the mailmap as git log does.
func authorLine(author string, mm *Mailmap) string {
	if strings.Contains(author, "=?") {
		if dec, err := new(mime.WordDecoder).DecodeHeader(author); err == nil {
			author = dec
		}
	}
	name, email, ok := ident.Parse(author)
	if !ok {
		return author
	}
	name, email = mm.Map(name, email)
	return name + " <" + email + ">"
}
