package boottest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"kpatch/internal/seriestest"
	"kpatch/plumbing/qemu"
	"kpatch/series"
)

// reportGuest turns the guest's "# bench:" lines into benchmark metrics.
func reportGuest(b *testing.B, rep *Report) {
	for _, line := range rep.Bench {
		mode := ""
		fields := map[string]float64{}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			if k == "mode" {
				mode = v
				continue
			}
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				fields[k] = n
			}
		}
		b.ReportMetric(fields["unwind_ns_per_frame"], mode+"-unwind-ns/frame")
		b.ReportMetric(fields["syscall_ns"], mode+"-syscall-ns")
		b.ReportMetric(fields["syscall_with_request_ns"], mode+"-syscall+request-ns")
	}
}

func benchRun(b *testing.B, ctx context.Context, dir string, s *series.Series, files map[string][]byte) *Report {
	rep, err := Run(ctx, s, Options{
		BuildOptions: BuildOptions{BuildDir: dir, Files: files, Log: testLog{b}},
		Accel:        qemu.AccelTCG,
		BootTimeout:  5 * time.Minute,
	})
	if err != nil {
		b.Fatal(err)
	}
	return rep
}

// BenchmarkQEMU measures whole runs (run with -benchtime=1x):
//
//   - cold: a fresh build directory (only with KPATCH_BENCH_COLD=1: it
//     costs a full kernel build);
//   - warm: nothing changed since the last run (goal: under 30 s);
//   - deferred_c: one line added to kernel/unwind/deferred.c (goal: under
//     2 minutes), then put back;
//
// and, from inside the guest, the cost of a deferred unwind per frame and
// of a system call with and without a pending request.
func BenchmarkQEMU(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	tree := requireTools(b, ctx)
	s, err := seriestest.Generate(ctx, seriestest.Options{Tree: tree, Base: "v6.12", Version: bootRevision, Stack: bootStack, WithPrerequisite: true})
	if err != nil {
		b.Fatal(err)
	}
	dir := buildDir(b)
	b.Run("cold", func(b *testing.B) {
		if os.Getenv("KPATCH_BENCH_COLD") != "1" {
			b.Skip("set KPATCH_BENCH_COLD=1 to measure a full kernel build")
		}
		cold := filepath.Join(filepath.Dir(dir), "x86_64-unwind-bench-cold")
		for i := 0; i < b.N; i++ {
			os.RemoveAll(cold)
			rep := benchRun(b, ctx, cold, s, nil)
			b.ReportMetric(rep.BuildTime.Seconds(), "build-s")
			b.ReportMetric(rep.BootTime.Seconds(), "boot-s")
		}
		os.RemoveAll(cold)
	})
	benchRun(b, ctx, dir, s, nil) // make sure the warm runs start from a built tree
	b.Run("warm", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rep := benchRun(b, ctx, dir, s, nil)
			b.ReportMetric(rep.BuildTime.Seconds(), "build-s")
			b.ReportMetric(rep.BootTime.Seconds(), "boot-s")
			reportGuest(b, rep)
		}
	})
	b.Run("deferred_c", func(b *testing.B) {
		const f = "kernel/unwind/deferred.c"
		for i := 0; i < b.N; i++ {
			changed := append(append([]byte{}, s.FinalFiles()[f]...), []byte("/* kpatch bench "+strconv.Itoa(i)+" */\n")...)
			b.StartTimer()
			rep := benchRun(b, ctx, dir, s, map[string][]byte{f: changed})
			b.StopTimer()
			b.ReportMetric(rep.BuildTime.Seconds(), "build-s")
			b.ReportMetric(rep.BootTime.Seconds(), "boot-s")
		}
		benchRun(b, ctx, dir, s, nil) // put deferred.c back
	})
}
