package revision

import (
	"fmt"
	"time"

	"kpatch/spec"
)

// RecordPosting records in the spec copy in specDir that revision r was
// posted (kpatch send): the Message-Ids of its messages, cover letter
// first, the date its cover letter was sent with and the base it was
// sent against, in its header, through the spec's writer. The caller
// holds the copy's lock (outdir.LockEdit).
func RecordPosting(specDir string, r *spec.Revision, ids []string, date time.Time, base string) error {
	if n := 1 + len(r.Patches) - r.Own; len(ids) != n {
		return fmt.Errorf("%s: %d messages sent, and the revision has %d", r.Dir, len(ids), n)
	}
	w := spec.NewWriter(specDir)
	if err := w.RecordPosting(r.Dir, ids, date, base); err != nil {
		return err
	}
	return w.Write()
}
