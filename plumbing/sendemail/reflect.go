package sendemail

import "strings"

// Reflect returns a mail file's text without its To: and Cc: headers
// (folded lines included), for a send to the sender alone (kpatch send
// --reflect, as b4 send --reflect): git send-email sends to every address
// those headers name. An X-Kpatch-Reflected header says who they named.
func Reflect(text string) string {
	head, body, ok := strings.Cut(text, "\n\n")
	if !ok {
		return text
	}
	var out, named []string
	dropping := false
	for _, l := range strings.Split(head, "\n") {
		if dropping && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) {
			named[len(named)-1] += " " + strings.TrimSpace(l)
			continue
		}
		k, v, _ := strings.Cut(l, ":")
		dropping = strings.EqualFold(k, "To") || strings.EqualFold(k, "Cc")
		if dropping {
			named = append(named, k+":"+v)
			continue
		}
		out = append(out, l)
	}
	for _, n := range named {
		// folded at every address: a line of mail is at most 998 bytes
		out = append(out, "X-Kpatch-Reflected-"+strings.ReplaceAll(n, ", ", ",\n\t"))
	}
	return strings.Join(out, "\n") + "\n\n" + body
}
