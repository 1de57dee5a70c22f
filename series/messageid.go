package series

import (
	"fmt"

	"kpatch/spec"
)

// MessageID returns the Message-Id (without angle brackets) kpatch gives
// message n (0: the cover letter) of revision r: it depends on the series
// description only.
func MessageID(r *spec.Revision, n int) string {
	return fmt.Sprintf("%s-v%d-%d@%s", r.ChangeID, r.Version, n, r.MessageIDDomain)
}
