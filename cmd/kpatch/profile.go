package main

import (
	"fmt"
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
	var cf, tf *os.File
	if tr != "" {
		f, err := os.Create(tr)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kpatch: KPATCH_TRACE: %v\n", err)
		} else {
			tf = f
		}
	}
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kpatch: KPATCH_CPUPROFILE: %v\n", err)
		} else {
			cf = f
		}
	}
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
