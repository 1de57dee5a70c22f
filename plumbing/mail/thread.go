package mail

// A thread saved as text is the form lore-style archives render and the
// seed (shared/seed/unwind-v11-thread.txt) has: every message starts with
// its subject line, a blank line and the sender in brackets ("[Steven
// Rostedt]"), followed by the body. Patches are the messages whose subject
// is "[PATCH vN MM/TT] ..."; replies start with "Re:". An mbox of the
// thread, as b4 mbox or lore's t.mbox.gz gives it, is read too (see
// ThreadText).

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Thread is a series thread saved as text: the cover letter, the patches in order
// and the replies.
type Thread struct {
	Version int            // the revision, from "[PATCH vN ...]"
	Total   int            // the number of patches announced in the subjects
	Cover   *ThreadMessage // the 00/NN message, nil if absent
	Patches []*ThreadPatch // patches 1..Total, in order
	Replies []*ThreadMessage
}

// ThreadMessage is one message of a thread saved as text.
type ThreadMessage struct {
	Subject string // the subject line as shown
	Sender  string // the name in brackets
	Body    string // everything after the sender line
	Line    int    // the line number of the subject in the thread
}

// ThreadPatch is one patch of a thread saved as text.
type ThreadPatch struct {
	ThreadMessage
	Number    int    // MM in "[PATCH vN MM/TT]"
	Title     string // the subject without the "[PATCH ...]" prefix
	Author    string // the in-body From: line, or "" when the sender is the author
	Log       string // the commit message, including trailers
	Changelog string // the text between "---" and the diffstat, if any
	Diffstat  string // the diffstat block, summary and create-mode lines included
	Files     []*gitdiff.File
	// Diff is the diff as the mail carries it: from its first "diff --git"
	// line, or a quilt diff's first header, to the signature.
	Diff string
}

// ErrNoMessages is returned by ParseThread for text with no message of a thread
// in it: no "[PATCH vN MM/TT]" or "Re: [PATCH" subject line followed by a
// blank line and "[Sender]".
var ErrNoMessages = errors.New("no messages of a saved thread found")

// ParseThreadFile reads a thread from a file.
func ParseThreadFile(path string) (*Thread, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseThread(data)
}

// ParseThread splits a thread into messages and parses every patch. The thread
// is in the text form described in the package documentation, or an mbox
// (b4 mbox, lore's t.mbox.gz, gzip-compressed or not; see ThreadText).
func ParseThread(data []byte) (*Thread, error) {
	data, err := ThreadText(data)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	var msgs []*ThreadMessage
	for i := 0; i+2 < len(lines); i++ {
		subj := strings.TrimSuffix(lines[i], "\n")
		if !ParseSubject(subj).Patch {
			continue
		}
		// A message header: subject, blank, "[Sender]" (the cover letter
		// repeats its subject once before).
		j := i + 1
		if strings.TrimSpace(lines[j]) != "" {
			continue
		}
		if strings.TrimSuffix(lines[j+1], "\n") == subj {
			continue // the first of the cover letter's two subject lines
		}
		snd := strings.TrimSpace(lines[j+1])
		if !strings.HasPrefix(snd, "[") || !strings.HasSuffix(snd, "]") {
			continue
		}
		if len(msgs) > 0 {
			prev := msgs[len(msgs)-1]
			prev.Body = strings.Join(lines[prev.Line+2:i], "")
		}
		msgs = append(msgs, &ThreadMessage{Subject: subj, Sender: snd[1 : len(snd)-1], Line: i + 1})
		i = j + 1
	}
	if len(msgs) == 0 {
		return nil, ErrNoMessages
	}
	last := msgs[len(msgs)-1]
	last.Body = strings.Join(lines[last.Line+2:], "")
	for _, m := range msgs {
		m.Body = strings.TrimPrefix(m.Body, "\n")
	}

	t := &Thread{}
	for _, m := range msgs {
		sub := ParseSubject(m.Subject)
		if sub.Reply {
			t.Replies = append(t.Replies, m)
			continue
		}
		t.Version, t.Total = sub.Version, sub.Total
		n := sub.Number
		if n == 0 {
			t.Cover = m
			continue
		}
		p, err := parseThreadPatch(m, n, sub.Total, sub.Version, sub.Title)
		if err != nil {
			return nil, err
		}
		t.Patches = append(t.Patches, p)
	}
	if len(t.Patches) > 0 {
		sortByNumber(t.Patches, func(p *ThreadPatch) int { return p.Number })
		ns := make([]numbered, len(t.Patches))
		for i, p := range t.Patches {
			ns[i] = numbered{p.Number, t.Total, p.Title}
		}
		if i, msg := numberingError(ns, false); i >= 0 {
			return nil, &locError{"", t.Patches[i].Line, msg}
		}
	}
	return t, nil
}

// parseThreadPatch reads patch n of total as parsePatch reads a patch of
// a mail.
func parseThreadPatch(m *ThreadMessage, n, total, version int, title string) (*ThreadPatch, error) {
	mp, err := parsePatch(&Message{Subject: m.Subject, From: m.Sender, Body: m.Body, Line: m.Line, SubjectLine: m.Line}, n, total, version, title)
	if err != nil {
		return nil, err
	}
	p := &ThreadPatch{ThreadMessage: *m, Number: n, Title: mp.Title, Log: mp.Log, Changelog: mp.Changelog, Diffstat: mp.Diffstat, Files: mp.Files, Diff: mp.Diff}
	if mp.inBodyFrom {
		p.Author = mp.Author
	}
	return p, nil
}

// ThreadText returns a thread in the text form ParseThread reads: data as it is, or
// the messages of an mbox rendered in that form (data may be
// gzip-compressed, as lore's t.mbox.gz is).
func ThreadText(data []byte) ([]byte, error) {
	if isGzip(data) {
		var err error
		if data, err = gunzip(data); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
	}
	if isMboxThread(data) {
		return fromMbox(data)
	}
	return data, nil
}
