package buildtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"kpatch/templates/linux"
)

// benchRun builds v11, from the spec copy specDir ("" the built-in one).
func benchRun(b *testing.B, specDir string, o Options) *Report {
	b.Helper()
	o.Jobs, o.Log = 2, testWriter{nil}
	s, _ := v11(b, specDir)
	rep, err := Run(context.Background(), s, o)
	if err != nil {
		b.Fatal(err)
	}
	if !rep.Passed {
		var s strings.Builder
		rep.WriteText(&s)
		b.Fatalf("the series does not build:\n%s", s.String())
	}
	return rep
}

func benchTree(b *testing.B) string {
	_, tree := v11(b, "")
	return tree
}

// ccacheStats returns ccache's hit and miss counters.
func ccacheStats(b *testing.B) (hits, misses int) {
	out, err := exec.Command("ccache", "--print-stats").Output()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "direct_cache_hit", "preprocessed_cache_hit":
			hits += n
		case "cache_miss":
			misses += n
		}
	}
	return hits, misses
}

func loadavg() float64 {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// BenchmarkMatrix measures whole kpatch test --build runs of v11 on
// Debian 6.12 in the three configurations (run with -benchtime=1x; each
// reports the load average at its start, since the machine may be
// shared):
//
//   - cold: fresh build trees, three base builds and every patch (only
//     with KPATCH_BENCH_COLD=1: it costs several full kernel builds);
//   - warm: nothing changed since the last run (goal: under 60 s);
//   - one_line: one template line changed (the comment at the top of
//     kernel/unwind/deferred.c, present from patch 4 on; goal: under 3
//     minutes), a new text each iteration.
func BenchmarkMatrix(b *testing.B) {
	b.Run("cold", func(b *testing.B) {
		if os.Getenv("KPATCH_BENCH_COLD") != "1" {
			b.Skip("set KPATCH_BENCH_COLD=1 to measure three full kernel builds and more")
		}
		for i := 0; i < b.N; i++ {
			root := filepath.Join(b.TempDir(), "build")
			b.ReportMetric(loadavg(), "load")
			benchRun(b, "", Options{BuildRoot: root})
		}
	})
	b.Run("ccache", func(b *testing.B) {
		if os.Getenv("KPATCH_BENCH_COLD") != "1" {
			b.Skip("set KPATCH_BENCH_COLD=1 to measure two cold base builds through ccache")
		}
		if _, err := exec.LookPath("ccache"); err != nil {
			b.Fatal("ccache is not installed (apt-get install ccache)")
		}
		cache := b.TempDir()
		b.Setenv("CCACHE_DIR", cache)
		for run := 0; run < 2; run++ {
			root := filepath.Join(b.TempDir(), "build") // a fresh build directory each time
			exec.Command("ccache", "-z").Run()
			b.ReportMetric(loadavg(), "load"+strconv.Itoa(run))
			start := time.Now()
			benchRun(b, "", Options{BuildRoot: root, Configs: []string{"i386"}, Patches: 1, CC: "ccache gcc"})
			b.ReportMetric(time.Since(start).Seconds(), "run"+strconv.Itoa(run)+"-s")
			hits, misses := ccacheStats(b)
			b.ReportMetric(float64(hits), "run"+strconv.Itoa(run)+"-hits")
			b.ReportMetric(float64(misses), "run"+strconv.Itoa(run)+"-misses")
			if run == 1 && hits <= misses {
				b.Errorf("second cold run: %d ccache hits, %d misses: not served from the cache", hits, misses)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		benchRun(b, "", Options{}) // from built trees: not timed
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.ReportMetric(loadavg(), "load")
			benchRun(b, "", Options{})
		}
	})
	b.Run("one_line", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dir := filepath.Join(b.TempDir(), "spec")
			if err := linux.Export(dir); err != nil {
				b.Fatal(err)
			}
			p := filepath.Join(dir, "files/kernel/unwind/deferred.c.tmpl")
			src, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			stamp := strconv.FormatInt(time.Now().UnixNano(), 10)
			changed := strings.Replace(string(src), " * Deferred user space unwinding\n", " * Deferred user space unwinding (bench "+stamp+")\n", 1)
			if changed == string(src) {
				b.Fatal("the line to change is not in deferred.c.tmpl")
			}
			os.WriteFile(p, []byte(changed), 0o644)
			b.ReportMetric(loadavg(), "load")
			b.StartTimer()
			rep := benchRun(b, dir, Options{})
			b.StopTimer()
			compiled := 0
			for _, c := range rep.Configs {
				for _, cell := range c.Cells {
					if !cell.Cached { // a reused step's count is of its own run
						compiled += cell.Compiled
					}
				}
			}
			b.ReportMetric(float64(compiled), "compiled")
		}
	})
}
