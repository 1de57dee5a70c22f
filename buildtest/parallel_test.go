package buildtest

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// TestParallelStopsStarting: once the context is done, parallel starts no
// further runner and says why; the runners already started finish (one at a time here, so that
// which ones started is certain).
func TestParallelStopsStarting(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		cancelAt  int // the runner whose f cancels the context; -1: none
		wantStart int
		wantErr   bool
	}{
		{"no cancel", 2, -1, 5, false},
		{"cancel in the first, one at a time", 1, 0, 1, true},
		{"cancel in the third, one at a time", 1, 2, 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rs := make([]*runner, 5)
			index := map[*runner]int{}
			for i := range rs {
				rs[i] = &runner{}
				index[rs[i]] = i
			}
			var mu sync.Mutex
			started := 0
			err := parallel(ctx, tc.n, rs, func(r *runner) error {
				mu.Lock()
				started++
				mu.Unlock()
				if index[r] == tc.cancelAt {
					cancel()
					return ctx.Err()
				}
				return nil
			})
			if started != tc.wantStart {
				t.Errorf("%d runners started, want %d", started, tc.wantStart)
			}
			if got := err != nil; got != tc.wantErr || tc.wantErr && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want one: %v (context.Canceled)", err, tc.wantErr)
			}
		})
	}
}
