package mail

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"kpatch/plumbing/outdir"
)

// Filename is git format-patch's name for patch n of revision v ("v11-0001-
// Subject-words.patch", at most 64 bytes; no "vN-" for v <= 1).
func Filename(v, n int, subject string) string {
	reroll := ""
	if v > 1 {
		reroll = strconv.Itoa(v)
	}
	return filename(reroll, n, subject)
}

// filename is git format-patch -v REROLL's name for patch n ("" for no
// -v: no "vN-").
func filename(reroll string, n int, subject string) string {
	var b strings.Builder
	space := 2
	for i := 0; i < len(subject); i++ {
		c := subject[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' {
			if space == 1 {
				b.WriteByte('-')
			}
			space = 0
			b.WriteByte(c)
			for c == '.' && i+1 < len(subject) && subject[i+1] == '.' {
				i++
			}
		} else {
			space |= 1
		}
	}
	name := fmt.Sprintf("%04d-%s", n, strings.TrimRight(b.String(), ".-"))
	if reroll != "" {
		name = "v" + reroll + "-" + name
	}
	if max := 64 - len(".patch") - 1; len(name) > max {
		name = name[:max]
	}
	return name + ".patch"
}

// Header is the header git format-patch writes above a message.
type Header struct {
	Commit    string // of the "From <commit> Mon Sep 17 00:00:00 2001" line; "" writes 40 zeros
	MessageID string // with or without its angle brackets; "" writes none
	InReplyTo string // the message answered, written as In-Reply-To and References; "" for none
	From      string // the sender, in any form ParseAddress reads
	Date      string // as git writes it ("Mon, 2 Jan 2006 15:04:05 -0700"); "" writes none
	Prefix    string // "[PATCH v3 1/2]", "" for none
	Title     string
	// EightBit writes the MIME headers git adds when the message is not
	// ASCII (see IsASCII).
	EightBit bool
	To, Cc   []string
	// Verbatim writes To and Cc as given, one address a line, as git
	// format-patch writes its --to and --cc, where they are otherwise
	// rewritten as RFC 5322 wants them (see NormalizeAddress).
	Verbatim bool
}

// DateLayout is the layout of the Date header git format-patch writes.
const DateLayout = "Mon, 2 Jan 2006 15:04:05 -0700"

// String writes the header as git format-patch does: the "From <commit>"
// line, Message-Id (and threading), From (the name quoted or RFC 2047
// encoded as needed), Date, Subject (prefix, then the title, RFC 2047
// encoded when not ASCII, folded at 78 columns), the MIME headers when
// EightBit, To and Cc (every address on a line of its own), and the blank
// line that ends it.
func (h *Header) String() string {
	var b strings.Builder
	c := h.Commit
	if c == "" {
		c = strings.Repeat("0", 40)
	}
	fmt.Fprintf(&b, "From %s Mon Sep 17 00:00:00 2001\n", c)
	if h.MessageID != "" {
		fmt.Fprintf(&b, "Message-Id: <%s>\n", strings.Trim(h.MessageID, "<>"))
	}
	if h.InReplyTo != "" {
		id := strings.Trim(h.InReplyTo, "<>")
		fmt.Fprintf(&b, "In-Reply-To: <%s>\nReferences: <%s>\n", id, id)
	}
	b.WriteString(fromHeader(h.From))
	if h.Date != "" {
		fmt.Fprintf(&b, "Date: %s\n", h.Date)
	}
	prefix := ""
	if h.Prefix != "" {
		prefix = h.Prefix + " "
	}
	if needsRFC2047(h.Title) {
		start := "Subject: " + prefix
		b.WriteString(start + rfc2047(h.Title, len(start), false) + "\n")
	} else {
		b.WriteString(wrap(prefix+h.Title, "Subject: ", " ", 78))
	}
	if h.EightBit {
		b.WriteString("MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n")
	}
	b.WriteString(addressHeader("To", h.To, h.Verbatim))
	b.WriteString(addressHeader("Cc", h.Cc, h.Verbatim))
	b.WriteString("\n")
	return b.String()
}

// Body is what git format-patch writes below the header of a patch.
type Body struct {
	Author    string // written as an in-body "From:" line when not "" (the author is not the sender)
	Log       string // the commit message below the title, ending in a newline
	Notes     string // between "---" and the diffstat, "" for none
	Diffstat  string // "" for none
	Diff      string // from the first "diff --git" line on
	Signature string // the text after the "-- " line; "" writes no signature
}

// FormatPatch writes one patch as git format-patch does: the header, the
// in-body From line if any, the commit message, "---", the notes, the
// diffstat, the diff and the signature.
func FormatPatch(h Header, body Body) string {
	var b strings.Builder
	b.WriteString(h.String())
	if body.Author != "" {
		fmt.Fprintf(&b, "From: %s\n\n", body.Author)
	}
	b.WriteString(body.Log)
	b.WriteString("---\n")
	if body.Notes != "" {
		b.WriteString(strings.TrimRight(body.Notes, "\n") + "\n\n")
	}
	if body.Diffstat != "" {
		b.WriteString(strings.TrimRight(body.Diffstat, "\n") + "\n\n")
	}
	b.WriteString(body.Diff)
	if body.Signature != "" {
		b.WriteString("-- \n" + body.Signature + "\n\n")
	}
	return b.String()
}

// IsASCII reports whether s is ASCII: git format-patch marks a message
// whose text is not as 8-bit UTF-8 (Header.EightBit).
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// addressHeader writes a To or Cc header as git format-patch writes its
// --to and --cc: every address on a line of its own, after "To: " or four
// spaces, each written as RFC 5322 wants it (see formatAddress) unless
// verbatim.
func addressHeader(name string, addrs []string, verbatim bool) string {
	if len(addrs) == 0 {
		return ""
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a
		if !verbatim {
			out[i] = headerAddress(a)
		}
	}
	return name + ": " + strings.Join(out, ",\n    ") + "\n"
}

// fromHeader writes the From header as git format-patch does: the name
// quoted or RFC 2047 encoded as needed.
func fromHeader(from string) string {
	name, addr, err := ParseAddress(from)
	if err != nil {
		return "From: " + from + "\n"
	}
	return "From: " + formatAddress(name, addr, len("From: ")) + "\n"
}

// Wrap fills words into lines of at most width columns (a word longer than
// that stands alone), the first line starting with first and the others
// with next, as git's strbuf_add_wrapped_text does for subjects and the
// shortlog of a cover letter.
func Wrap(text, first, next string, width int) string { return wrap(text, first, next, width) }

func wrap(text, first, next string, width int) string {
	var b strings.Builder
	line, empty := first, true
	for _, w := range strings.Fields(text) {
		if !empty && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line, empty = next, true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}

// Text renders the patch as git format-patch writes the commit git am
// makes of it (FormatPatch): the "From <commit>" line (zeros when the
// commit is unknown), the threading headers and recipients of the mail
// as it was posted, the author as From, the author date as Date, the
// subject (the posted prefix, the title), the commit message, "---", the
// notes, the diffstat, the diff and the signature of the mail.
func (p *Patch) Text() string {
	prefix := ""
	if sub := ParseSubject(p.Subject); sub.Patch {
		prefix = "[" + sub.Prefix + "]"
	}
	return FormatPatch(Header{Commit: p.Commit, MessageID: p.MessageID, InReplyTo: p.InReplyTo, From: p.Author, Date: p.AuthorDate,
		Prefix: prefix, Title: p.Title, EightBit: !IsASCII(p.Title + p.Log), To: p.To, Cc: p.Cc, Verbatim: true},
		Body{Log: p.Log, Notes: p.Changelog, Diffstat: p.Diffstat, Diff: p.Diff, Signature: p.Signature})
}

// WriteDir writes the series' patches into dir, which must not exist, one
// format-patch file each, named as git format-patch names them (and the
// cover letter as 0000 when there is one), atomically (package outdir's Create: into a temporary directory
// renamed into place when complete). It returns the file names.
func (s *Series) WriteDir(dir string) ([]string, error) {
	var names []string
	err := outdir.Create(dir, func(tmp string) error {
		write := func(name, text string) error {
			names = append(names, filepath.Join(dir, name))
			return os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o644)
		}
		if s.Cover != nil {
			c := s.Cover
			h := Header{Commit: c.Commit, MessageID: c.MessageID, InReplyTo: c.InReplyTo, From: c.From, Date: c.Date,
				Title: c.Subject, EightBit: !IsASCII(c.Subject + c.Body), To: c.To, Cc: c.Cc, Verbatim: true}
			if sub := ParseSubject(s.Cover.Subject); sub.Patch {
				h.Prefix, h.Title = "["+sub.Prefix+"]", sub.Title
			}
			name := "0000-cover-letter.patch"
			if reroll := s.reroll(); reroll != "" {
				name = "v" + reroll + "-" + name
			}
			if err := write(name, h.String()+s.Cover.Body); err != nil {
				return err
			}
		}
		for _, p := range s.Patches {
			if err := write(filename(s.reroll(), p.Number, p.Title), p.Text()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// reroll is the version the series' subjects give ("2" of "[PATCH v2
// 1/3]"), as git format-patch -v wrote it and names its files by; "" for
// none (git format-patch names "[PATCH v1 1/3]" files "v1-0001-...", and
// "[PATCH 1/3]" ones "0001-...").
func (s *Series) reroll() string {
	subject := s.Patches[0].Subject
	if s.Cover != nil {
		subject = s.Cover.Subject
	}
	if vm := versionRE.FindStringSubmatch(ParseSubject(subject).Prefix); vm != nil {
		return vm[1]
	}
	return ""
}
