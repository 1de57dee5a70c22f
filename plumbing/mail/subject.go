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
	replyRE   = regexp.MustCompile(`^\s*(?i:re|aw):`)
	numRE     = regexp.MustCompile(`(?:^|\s)(\d+)/(\d+)(?:\s|$)`)
	versionRE = regexp.MustCompile(`(?:^|\s)[vV](\d+)(?:\s|$)`)
)

// ParseSubject reads a subject. The title is what git mailinfo keeps
// (cleanup_subject): leading "Re:", whitespace, colons and bracketed
// groups are taken off, "[RFC][PATCH 3/4]" as "[RFC PATCH 3/4]"; the
// bracketed groups, joined, are the prefix. A subject whose prefix holds
// no PATCH has Patch false.
func ParseSubject(subject string) Subject {
	s := Subject{Reply: replyRE.MatchString(subject), Number: 1, Total: 1, Version: 1}
	rest := subject
	var groups []string
	for {
		rest = strings.TrimLeft(rest, " \t:")
		if len(rest) >= 3 && strings.EqualFold(rest[:3], "re:") {
			rest = rest[3:]
			continue
		}
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				break
			}
			groups = append(groups, strings.TrimSpace(rest[1:end]))
			rest = rest[end+1:]
			continue
		}
		break
	}
	s.Title = strings.Join(strings.Fields(rest), " ")
	s.Prefix = strings.Join(groups, " ")
	if len(groups) == 0 {
		return s
	}
	s.Patch = strings.Contains(strings.ToUpper(s.Prefix), "PATCH")
	if nm := numRE.FindStringSubmatch(s.Prefix); nm != nil {
		s.Numbered = true
		s.Number, _ = strconv.Atoi(nm[1])
		s.Total, _ = strconv.Atoi(nm[2])
	}
	if vm := versionRE.FindStringSubmatch(s.Prefix); vm != nil {
		s.Version, _ = strconv.Atoi(vm[1])
	}
	return s
}
