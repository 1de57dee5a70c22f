package mail

// The body of a mail as it is stored (in an mbox, a saved thread, a .patch
// file) is turned into the text its sender wrote: the
// Content-Transfer-Encoding undone (quoted-printable, base64) and, for a
// multipart message, the first text/plain part taken (a patch with a
// signature or an attachment beside it), text in ISO-8859-1 re-coded
// to UTF-8 (as git am re-codes a commit message into i18n.commitEncoding),
// and format=flowed undone.
// Mail archives such as lore serve patches in all of these forms; git am
// reads them all.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"strings"
	"unicode/utf8"
)

// bodyHeader is the part of a mail header the decoding reads
// (net/mail.Header, textproto.MIMEHeader and multipart part headers have
// it).
type bodyHeader interface {
	Get(key string) string
}

// bodyEncoded reports whether a body with this header needs bodyText to be read:
// it is transfer-encoded, multipart, or in ISO-8859-1.
func bodyEncoded(h bodyHeader) bool {
	switch strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding"))) {
	case "quoted-printable", "base64":
		return true
	}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && (strings.HasPrefix(mt, "multipart/") || latin1[strings.ToLower(params["charset"])] ||
		strings.EqualFold(params["format"], "flowed"))
}

// latin1 are the names of ISO-8859-1 in Content-Type's charset.
var latin1 = map[string]bool{"iso-8859-1": true, "iso8859-1": true, "latin1": true, "latin-1": true, "l1": true}

// bodyText returns the text of the body r of a mail with header h, with line
// ends as "\n".
func bodyText(h bodyHeader, r io.Reader) (string, error) {
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err == nil && strings.HasPrefix(mt, "multipart/") {
		// As git mailinfo does, the text of every part is read, in order:
		// a commit message and the diff attached to it (git format-patch
		// --attach or --inline, a mailer's attachment) are one body.
		// Parts that are not text (a signature, an image) and HTML
		// alternatives are left out.
		mr := multipart.NewReader(r, params["boundary"])
		var b strings.Builder
		found := false
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return "", fmt.Errorf("a part of the multipart body: %w", err)
			}
			if !textPart(p.Header) {
				continue
			}
			text, err := bodyText(p.Header, p)
			if err != nil {
				return "", err
			}
			found = true
			b.WriteString(text)
			if text != "" && !strings.HasSuffix(text, "\n") {
				b.WriteString("\n")
			}
		}
		if !found {
			return "", errors.New("no text/plain part")
		}
		return b.String(), nil
	}
	switch strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding"))) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, &lineJoiner{r: r})
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	text := string(b)
	if latin1[strings.ToLower(params["charset"])] && !utf8.ValidString(text) {
		var u strings.Builder
		for _, c := range b {
			u.WriteRune(rune(c)) // ISO-8859-1 is the first 256 code points
		}
		text = u.String()
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if strings.EqualFold(params["format"], "flowed") {
		text = unflow(text, strings.EqualFold(params["delsp"], "yes"))
	}
	return text, nil
}

// unflow undoes format=flowed (RFC 3676) as git mailinfo does
// (handle_filter_flowed): a space-stuffed line loses its first space, a
// line ending in a space is joined with the next (without that space
// when delsp), and the signature separator "-- " stays a line of its
// own. A body that ends in a flowed line ends without a newline, as in
// git.
func unflow(text string, delsp bool) string {
	var b, prev strings.Builder
	for len(text) > 0 {
		line, nl := text, ""
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, nl, text = text[:i], "\n", text[i+1:]
		} else {
			text = ""
		}
		if line == "-- " {
			b.WriteString(prev.String())
			prev.Reset()
			b.WriteString(line + nl)
			continue
		}
		line = strings.TrimPrefix(line, " ")
		if strings.HasSuffix(line, " ") {
			if delsp {
				line = line[:len(line)-1]
			}
			prev.WriteString(line)
			continue
		}
		b.WriteString(prev.String() + line + nl)
		prev.Reset()
	}
	b.WriteString(prev.String())
	return b.String()
}

// textPart reports whether a part of a multipart body holds text that git
// am would read: text/plain, a diff (text/x-patch, text/x-diff, and the
// application types mailers give .patch files), a nested multipart.
func textPart(h bodyHeader) bool {
	pt, params, _ := mime.ParseMediaType(h.Get("Content-Type"))
	switch {
	case pt == "" || pt == "text/plain" || strings.HasPrefix(pt, "multipart/"):
		return true
	case pt == "text/x-patch" || pt == "text/x-diff" || pt == "application/x-patch" || pt == "application/x-diff":
		return true
	case pt == "application/octet-stream":
		_, dp, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
		name := dp["filename"] + params["name"]
		return strings.HasSuffix(name, ".patch") || strings.HasSuffix(name, ".diff")
	}
	return false
}

// lineJoiner drops the line breaks of a base64 body.
type lineJoiner struct{ r io.Reader }

func (l *lineJoiner) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	j := 0
	for _, c := range p[:n] {
		if c != '\n' && c != '\r' {
			p[j] = c
			j++
		}
	}
	if j == 0 && n > 0 && err == nil {
		return l.Read(p)
	}
	return j, err
}
