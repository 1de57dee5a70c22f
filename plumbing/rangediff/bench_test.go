package rangediff

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchSeries returns n patches that each change one line of their own
// file; with distinct false, every patch has the same diff (the
// "identical patches" case of git range-diff's cubic reports).
func benchSeries(n int, tag string, distinct bool) []Patch {
	out := make([]Patch, n)
	for i := range out {
		name := "f.c"
		if distinct {
			name = fmt.Sprintf("f%05d.c", i)
		}
		diff := fmt.Sprintf("diff --git a/%s b/%s\nindex 1111111..2222222 100644\n--- a/%s\n+++ b/%s\n@@ -1,4 +1,4 @@ int f(void)\n a\n-b\n+c\n d\n e\n", name, name, name, name)
		out[i] = Patch{
			Commit:  fmt.Sprintf("%s%011d", tag, i),
			Author:  "A U Thor <a@example.com>",
			Message: fmt.Sprintf("subject %d\n\nbody of %d\n", i, i),
			Diff:    diff,
		}
	}
	return out
}

// BenchmarkDiff compares series of identical patches (git's hash-map
// pairing and an assignment with nothing left to choose, O(n²)) and of
// distinct ones where a few patches changed (the costs between the
// changed ones are computed).
func BenchmarkDiff(b *testing.B) {
	for _, n := range []int{1000, 2000, 10000} {
		for _, distinct := range []bool{false, true} {
			old, new := benchSeries(n, "a", distinct), benchSeries(n, "b", distinct)
			if distinct {
				for i := 0; i < n; i += n / 10 {
					new[i].Diff = strings.Replace(new[i].Diff, "+c\n", "+changed\n", 1)
				}
			}
			b.Run(fmt.Sprintf("n=%d/distinct=%v", n, distinct), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					out, err := DiffContext(context.Background(), old, new, Options{CreationFactor: DefaultCreationFactor})
					if err != nil || !strings.Contains(out, "subject") {
						b.Fatalf("%v %.200q", err, out)
					}
				}
			})
		}
	}
}

// TestDiffContextStops: a done context stops the comparison of a large
// series with the context's error and no output, whether it is done
// before the start or part-way.
func TestDiffContextStops(t *testing.T) {
	old, new := benchSeries(3000, "a", false), benchSeries(3000, "b", false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if out, err := DiffContext(ctx, old, new, Options{CreationFactor: DefaultCreationFactor}); err != context.Canceled || out != "" {
		t.Errorf("cancelled before: %v, %d bytes", err, len(out))
	}
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := DiffContext(ctx, old, new, Options{CreationFactor: DefaultCreationFactor})
		done <- err
	}()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("cancelled part-way: %v", err)
	}
}
