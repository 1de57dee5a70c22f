package mail

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	netmail "net/mail"
	"sort"
	"strings"
)

// isMboxThread reports whether data is an mbox rather than the thread
// text form: it starts with an mbox separator line.
func isMboxThread(data []byte) bool {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	return mboxFrom.Match(bytes.TrimSuffix(first, []byte("\r")))
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

// fromMbox renders the messages of an mbox (b4 mbox, or lore's t.mbox.gz
// unpacked), read by readMbox, in the thread text form ParseThread reads:
// for every message its subject, a blank line, "[Sender]" (the sender's
// name, else address), a blank line and the body. The cover letter comes
// first, then the patches by number, then the replies in the mbox's
// order; a message that appears twice (the same Message-Id, as
// cross-posted mail does in an archive) counts once.
func fromMbox(data []byte) ([]byte, error) {
	all, err := readMbox(data, "")
	if err != nil {
		return nil, err
	}
	type message struct {
		*Message
		number int // "[PATCH vN MM/TT]": MM; -1 for a reply
	}
	seen := map[string]bool{}
	var msgs []message
	for _, m := range all {
		if m.MessageID != "" && seen[m.MessageID] {
			continue
		}
		seen[m.MessageID] = true
		x := message{m, -1}
		if sub := ParseSubject(m.Subject); sub.Patch && !sub.Reply {
			x.number = sub.Number
		}
		msgs = append(msgs, x)
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
		sender := m.From
		if a, err := netmail.ParseAddress(sender); err == nil {
			sender = a.Name
			if sender == "" {
				sender = a.Address
			}
		}
		fmt.Fprintf(&b, "%s\n\n[%s]\n\n%s", strings.Join(strings.Fields(m.Subject), " "), sender, m.Body)
		if !strings.HasSuffix(m.Body, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return []byte(b.String()), nil
}
