package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// startProfiles starts the profiles the environment asks for, for
// measuring kpatch as a whole process (scripts/bench-gen.sh):
// KPATCH_CPUPROFILE=FILE writes a CPU profile, KPATCH_MEMPROFILE=FILE an
// allocation profile (every allocation sampled), KPATCH_TRACE=FILE an
// execution trace (go tool trace: what each core ran when). The returned
// function writes them out.
func startProfiles() func() {
	cpu, mem, tr := os.Getenv("KPATCH_CPUPROFILE"), os.Getenv("KPATCH_MEMPROFILE"), os.Getenv("KPATCH_TRACE")
	if cpu == "" && mem == "" && tr == "" {
		return func() {}
	}
	tf := startWriting("KPATCH_TRACE", tr, trace.Start)
	cf := startWriting("KPATCH_CPUPROFILE", cpu, pprof.StartCPUProfile)
	if mem != "" {
		runtime.MemProfileRate = 1
	}
	return func() {
		if tf != nil {
			trace.Stop()
			tf.Close()
		}
		if cf != nil {
			pprof.StopCPUProfile()
			cf.Close()
		}
		if mem != "" {
			// The allocation profile stands as of the last collection:
			// one now counts the allocations made since.
			runtime.GC()
			f, err := os.Create(mem)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "kpatch: KPATCH_MEMPROFILE: %v\n", err)
			}
		}
	}
}

// startWriting creates the file path (the value of the variable env) and
// starts start writing to it; it returns nil, having said why on
// standard error, when either fails, and nil for an empty path.
func startWriting(env, path string, start func(io.Writer) error) *os.File {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err == nil {
		if err = start(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kpatch: %s: %v\n", env, err)
		return nil
	}
	return f
}
