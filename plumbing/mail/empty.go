package mail

import "strings"

// emptyCommit returns the commit message and the signature of the body of
// a patch mail that git format-patch --always writes for a commit that
// changes nothing: the message, then the signature ("-- " and the version
// line), with no "---" line and no diff. A mail cut short has no
// signature, and stays an error.
func emptyCommit(body string) (log, signature string, ok bool) {
	if holdsDiff(body) {
		return "", "", false
	}
	i := strings.LastIndex("\n"+body, "\n-- \n")
	if i < 0 {
		return "", "", false
	}
	sig := strings.TrimRight(body[i+len("-- \n"):], "\n")
	if sig == "" || strings.Contains(sig, "\n") {
		return "", "", false
	}
	return body[:i], sig, true
}
