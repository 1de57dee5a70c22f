package verify

import (
	"context"
	"errors"
	"testing"
)

// TestInterruptible: a verify stopped by Ctrl-C returns the context's error
// at once, however long the work it abandons would take; work that ends
// first returns its own result.
func TestInterruptible(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block := make(chan struct{})
	defer close(block)
	cancel()
	if err := interruptible(ctx, func() error { <-block; return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("stopped: %v", err)
	}
	want := errors.New("done")
	if err := interruptible(context.Background(), func() error { return want }); err != want {
		t.Errorf("finished: %v", err)
	}
}
