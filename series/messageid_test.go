package series_test

import (
	"context"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/series"
)

// TestMessageIDMatchesHeaders: MessageID (what kpatch revision new links
// to) is the Message-Id gen writes on every message.
func TestMessageIDMatchesHeaders(t *testing.T) {
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: debianTree(t), Base: "v6.12", Version: 11})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range seriestest.Messages(t, s) {
		if want := "\nMessage-Id: <" + series.MessageID(s.Revision, i) + ">\n"; !strings.Contains(m.Text, want) {
			t.Errorf("message %d has no %q", i, strings.TrimSpace(want))
		}
	}
}
