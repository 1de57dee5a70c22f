package mail

import (
	"regexp"
	"strconv"
	"strings"
)

// Subject is what the subject of a mail says about the patch it carries,
// read as git format-patch, b4 and list archives write it:
// "[PATCH v12 03/14] title", "Re: [RFC PATCH net-next 1/2] title",
// "[PATCH] title".
type Subject struct {
	Patch    bool // the bracketed prefix holds a PATCH tag
	Reply    bool // the subject starts with "Re:" (or "Aw:")
	Numbered bool // the prefix holds "m/n"
	// Number and Total are m and n of "m/n" (0 for a cover letter); 1
	// and 1 when the prefix holds no number.
	Number, Total int
	Version       int    // N of "vN" in the prefix, 1 if none
	Prefix        string // the text inside the brackets
	Title         string // the subject without "Re:" and the prefix, runs of spaces as one
}

var (
	prefixRE  = regexp.MustCompile(`^\s*(?:(?:Re|RE|re|Aw|AW):\s*)*\[([^\]]*)\]\s*(.*)$`)
	replyRE   = regexp.MustCompile(`^\s*(?i:re|aw):`)
	numRE     = regexp.MustCompile(`(?:^|\s)(\d+)/(\d+)(?:\s|$)`)
	versionRE = regexp.MustCompile(`(?:^|\s)[vV](\d+)(?:\s|$)`)
)

// ParseSubject reads a subject. A subject without a bracketed prefix
// holding PATCH has Patch false and its whole text (after "Re:") as Title.
func ParseSubject(subject string) Subject {
	s := Subject{Reply: replyRE.MatchString(subject), Number: 1, Total: 1, Version: 1}
	sm := prefixRE.FindStringSubmatch(subject)
	if sm == nil {
		s.Title = strings.Join(strings.Fields(replyRE.ReplaceAllString(subject, "")), " ")
		return s
	}
	s.Prefix = sm[1]
	s.Title = strings.Join(strings.Fields(sm[2]), " ")
	s.Patch = strings.Contains(strings.ToUpper(sm[1]), "PATCH")
	if nm := numRE.FindStringSubmatch(sm[1]); nm != nil {
		s.Numbered = true
		s.Number, _ = strconv.Atoi(nm[1])
		s.Total, _ = strconv.Atoi(nm[2])
	}
	if vm := versionRE.FindStringSubmatch(sm[1]); vm != nil {
		s.Version, _ = strconv.Atoi(vm[1])
	}
	return s
}
