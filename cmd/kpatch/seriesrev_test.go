package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSeriesDiffRefusesMissingRevision: v0 (which the series options
// would read as "the newest") and a revision the description lacks are
// refused with one line naming the revisions it has, before any tree is
// read.
func TestSeriesDiffRefusesMissingRevision(t *testing.T) {
	for _, args := range [][]string{{"v0", "v12"}, {"v99", "v12"}} {
		var out, errb bytes.Buffer
		code := run(append([]string{"series", "diff", "--tree", t.TempDir()}, args...), &out, &errb)
		msg := errb.String()
		if code == 0 || out.Len() != 0 || strings.Count(msg, "\n") != 1 ||
			!strings.Contains(msg, args[0]+": no such revision") || !strings.Contains(msg, "it has v11") {
			t.Errorf("series diff %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out.String(), msg)
		}
	}
}
