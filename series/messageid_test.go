package series_test

import (
	"context"
	"strings"
	"testing"

	"kpatch/series"
)

// TestMessageIDMatchesHeaders: MessageID (what kpatch revision new links
// to) is the Message-Id gen writes on every message.
func TestMessageIDMatchesHeaders(t *testing.T) {
	s, err := series.Generate(context.Background(), series.Options{Tree: debianTree(t), Base: "v6.12", Version: 11})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range s.Messages() {
		if want := "\nMessage-Id: <" + series.MessageID(s.Revision, i) + ">\n"; !strings.Contains(m.Text, want) {
			t.Errorf("message %d has no %q", i, strings.TrimSpace(want))
		}
	}
}
