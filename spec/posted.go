package spec

import (
	"fmt"
	"strings"
	"time"
)

// The posting of a revision is recorded in its header (see Revision
// header): Date is the date the cover letter was sent with, Base the base
// it was sent against, and
//
//	Message-Ids: COVER, PATCH1, PATCH2, ...
//
// the Message-Ids of the messages as posted, the cover letter's first,
// then each patch's in order (a stacked series': its own patches'), without
// angle brackets. A revision posted before kpatch recorded postings may
// give only the ids the archive is known to have: the list may end early,
// and "-" stands for a message whose id is not known.

// unknownID stands in a Message-Ids list for a message whose id is not
// known.
const unknownID = "-"

// parseMessageIDs reads the value of a Message-Ids header field.
func parseMessageIDs(v string) ([]string, error) {
	var ids []string
	for _, f := range strings.Split(v, ",") {
		id := strings.TrimSpace(f)
		if id != unknownID {
			if err := checkMessageID(id); err != nil {
				return nil, fmt.Errorf("Message-Ids: %w", err)
			}
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 || ids[0] == unknownID {
		return nil, fmt.Errorf("Message-Ids: the cover letter's comes first: \"Message-Ids: ID, ID...\"")
	}
	return ids, nil
}

// checkMessageID says why id is not a Message-Id as the header field
// holds it: local@domain, without angle brackets or spaces.
func checkMessageID(id string) error {
	local, domain, ok := strings.Cut(id, "@")
	if !ok || local == "" || domain == "" || strings.ContainsAny(id, "<> \t,\"") || strings.Contains(domain, "@") {
		return fmt.Errorf("%q is not a Message-Id: want local@domain, without <>", id)
	}
	return nil
}

// checkPosted checks the recorded Message-Ids against the revision's
// messages: no more than its cover letter and own patches.
func (r *Revision) checkPosted(src string) error {
	if n := 1 + len(r.Patches) - r.Own; len(r.MessageIDs) > n {
		return fmt.Errorf("%s: Message-Ids names %d messages, and v%d has %d (the cover letter and %d patches)", src, len(r.MessageIDs), r.Version, n, n-1)
	}
	return nil
}

// Posted reports whether the revision's posting is recorded: the
// Message-Id of its cover letter at least.
func (r *Revision) Posted() bool { return len(r.MessageIDs) > 0 }

// PostedID returns the Message-Id recorded for message n of the revision
// as posted (0: the cover letter; n: its n-th own patch), or "" when
// none is.
func (r *Revision) PostedID(n int) string {
	if n < 0 || n >= len(r.MessageIDs) || r.MessageIDs[n] == unknownID {
		return ""
	}
	return r.MessageIDs[n]
}

// RecordPosting records in the header of the revision in folder rev that
// it was posted: the Message-Ids of its messages (cover letter first),
// the date its cover letter was sent with and the base it was sent
// against (see Revision header). Write writes it, and only when the spec
// loads with it.
func (w *Writer) RecordPosting(rev string, ids []string, date time.Time, base string) error {
	if len(ids) == 0 {
		return fmt.Errorf("%s: no Message-Id to record", rev)
	}
	for _, id := range ids {
		if err := checkMessageID(id); err != nil {
			return fmt.Errorf("%s: %w", rev, err)
		}
	}
	if err := w.SetField(rev, "Message-Ids", strings.Join(ids, ", ")); err != nil {
		return err
	}
	if !date.IsZero() {
		if err := w.SetField(rev, "Date", date.Format(time.RFC1123Z)); err != nil {
			return err
		}
	}
	if base != "" {
		if err := w.SetField(rev, "Base", base); err != nil {
			return err
		}
	}
	return nil
}

// ClearPosting removes the record of a posting from the header of the
// revision in folder rev: a new revision started from a posted one
// (AddRevision copies its header) has not been posted yet.
func (w *Writer) ClearPosting(rev string) error {
	src := rev + "/series"
	data, err := w.read(src)
	if err != nil {
		return err
	}
	header, rest, hasRest := strings.Cut(string(data), "\n\n")
	var out []string
	for _, l := range strings.Split(header, "\n") {
		if k, _, ok := strings.Cut(l, ":"); ok && k == "Message-Ids" {
			continue
		}
		out = append(out, l)
	}
	text := strings.Join(out, "\n")
	if hasRest {
		text += "\n\n" + rest
	}
	w.set(src, []byte(text))
	return nil
}
