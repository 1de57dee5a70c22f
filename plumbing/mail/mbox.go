package mail

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/mail"
	"regexp"
	"sort"
	"strings"
)

// threadMboxFrom matches an mbox separator line, "From SENDER asctime-date", as
// b4 mbox and lore's t.mbox.gz write them ("From mboxrd@z Thu Jan  1
// 00:00:00 1970").
var threadMboxFrom = regexp.MustCompile(`(?m)^From \S+ +\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\r?\n`)

// mangledFrom matches a body line mboxrd quoted: ">From ", ">>From ", ...
var mangledFrom = regexp.MustCompile(`(?m)^>(>*From )`)

// isMboxThread reports whether data is an mbox rather than the thread text form.
func isMboxThread(data []byte) bool {
	loc := threadMboxFrom.FindIndex(data)
	return loc != nil && loc[0] == 0
}

// isGzip reports whether data is gzip-compressed (lore's t.mbox.gz).
func isGzip(data []byte) bool { return len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b }

func gunzip(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// mboxMessage is one message of an mbox, decoded.
type mboxMessage struct {
	subject, sender, body string
	number                int // "[PATCH vN MM/TT]": MM; -1 for a reply
}

// fromMbox renders the messages of an mbox (b4 mbox, or lore's t.mbox.gz
// unpacked) in the thread text form ParseThread reads: for every message its
// subject, a blank line, "[Sender]", a blank line and the body. The cover
// letter comes first, then the patches by number, then the replies in the
// mbox's order; a message that appears twice (the same Message-Id, as
// cross-posted mail does in an archive) counts once.
func fromMbox(data []byte) ([]byte, error) {
	starts := threadMboxFrom.FindAllIndex(data, -1)
	seen := map[string]bool{}
	var msgs []mboxMessage
	for i, s := range starts {
		end := len(data)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		raw := mangledFrom.ReplaceAll(data[s[1]:end], []byte("$1"))
		m, id, err := decodeMail(raw)
		if err != nil {
			return nil, fmt.Errorf("message %d of the mbox: %w", i+1, err)
		}
		if id != "" && seen[id] {
			continue
		}
		seen[id] = true
		msgs = append(msgs, m)
	}
	sort.SliceStable(msgs, func(i, j int) bool {
		a, b := msgs[i].number, msgs[j].number
		if a < 0 || b < 0 {
			return a >= 0 && b < 0
		}
		return a < b
	})
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s\n\n[%s]\n\n%s", m.subject, m.sender, m.body)
		if !strings.HasSuffix(m.body, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return []byte(b.String()), nil
}

// decodeMail decodes one message: its subject and sender's name (RFC 2047
// words decoded), and its text body (quoted-printable or base64 decoded,
// the first text/plain part of a multipart message).
func decodeMail(raw []byte) (mboxMessage, string, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return mboxMessage{}, "", err
	}
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		subject = msg.Header.Get("Subject")
	}
	subject = strings.Join(strings.Fields(subject), " ")
	sender := msg.Header.Get("From")
	if a, err := mail.ParseAddress(sender); err == nil {
		sender = a.Name
		if sender == "" {
			sender = a.Address
		}
	}
	body, err := bodyText(msg.Header, msg.Body)
	if err != nil {
		return mboxMessage{}, "", err
	}
	m := mboxMessage{subject: subject, sender: sender, body: strings.ReplaceAll(body, "\r\n", "\n"), number: -1}
	if sub := ParseSubject(subject); sub.Patch && !sub.Reply {
		m.number = sub.Number
	}
	return m, strings.TrimSpace(msg.Header.Get("Message-Id")), nil
}
