package mail

import (
	"mime"
	"strings"
)

// inBody holds the in-body headers of a patch's body: nil for each that
// the body does not give.
type inBody struct {
	from, subject, date *string
}

// readInBody reads the in-body headers from the start of a patch's body
// as git mailinfo does (check_inbody_header), and returns them with the
// rest of the body. Blank lines before them are skipped; a header is a
// line "From:", "Subject:" or "Date:" (any case) not given yet, with the
// lines that start with a space or a tab after it; "[PATCH] title" gives
// the subject; a ">From <sha> Mon Sep 17 00:00:00 2001" line is skipped.
// The first blank line after a header ends them (and is dropped), and so
// does the first other line (which stays in the body). A header's value
// starts after its colon and the white space there, and has its RFC 2047
// words decoded.
func readInBody(body string) (inBody, string) {
	var ib inBody
	var accum string // the header being read, its lines joined
	flush := func() {
		if accum == "" {
			return
		}
		for _, h := range []struct {
			name string
			v    **string
		}{{"From", &ib.from}, {"Subject", &ib.subject}, {"Date", &ib.date}} {
			if *h.v != nil || !isHeader(accum, h.name) {
				continue
			}
			v := strings.TrimSuffix(strings.TrimLeft(accum[len(h.name)+1:], " \t\n\r"), "\n")
			if d, err := new(mime.WordDecoder).DecodeHeader(v); err == nil {
				v = d
			}
			*h.v = &v
			break
		}
		accum = ""
	}
	rest := body
	for rest != "" {
		line, next := rest, ""
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, next = rest[:i+1], rest[i+1:]
		}
		switch {
		case line == "\n":
			if accum != "" {
				flush()
				return ib, next
			}
		case accum != "" && (line[0] == ' ' || line[0] == '\t'):
			accum = strings.TrimSuffix(accum, "\n") + line
		default:
			flush()
			switch {
			case strings.HasPrefix(line, ">From") && len(line) > 5 && isGitSpace(line[5]):
				if !fromLine.MatchString(strings.TrimSuffix(line[1:], "\n")) {
					return ib, rest
				}
			case strings.HasPrefix(line, "[PATCH]") && len(line) > 7 && isGitSpace(line[7]):
				v := strings.TrimSuffix(line, "\n")
				ib.subject = &v
			case ib.isHeader(line):
				accum = line
			default:
				return ib, rest
			}
		}
		rest = next
	}
	flush()
	return ib, rest
}

// isHeader reports whether line starts an in-body header not given yet
// (git mailinfo's is_inbody_header: the name in any case and a colon).
func (ib *inBody) isHeader(line string) bool {
	for _, h := range []struct {
		name  string
		given bool
	}{{"From", ib.from != nil}, {"Subject", ib.subject != nil}, {"Date", ib.date != nil}} {
		if !h.given && isHeader(line, h.name) {
			return true
		}
	}
	return false
}

// isHeader reports whether line is a header called name (in any case).
func isHeader(line, name string) bool {
	return len(line) > len(name) && strings.EqualFold(line[:len(name)], name) && line[len(name)] == ':'
}

// isGitSpace is git's isspace: space, tab, newline, carriage return.
func isGitSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
