package buildtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"kpatch/plumbing/kbuild"
)

// make runs make in the object tree, feeding p with the output.
func (r *runner) make(ctx context.Context, p *outputParser, few bool, targets ...string) error {
	return r.makeWith(ctx, p, few, nil, targets...)
}

// makeWith is make, adding the CPU time make and its children took to
// cpu, or to the configuration's other CPU time when cpu is nil.
func (r *runner) makeWith(ctx context.Context, p *outputParser, few bool, cpu *time.Duration, targets ...string) error {
	if cpu == nil {
		cpu = r.otherCPU
	}
	var progress kbuild.Progress
	var mu sync.Mutex
	var lw io.Writer = lineFunc(func(l string) {
		mu.Lock()
		p.line(l)
		mu.Unlock()
	})
	prefix := "kbuild: " + r.cfg.Name + ": "
	switch {
	case r.o.Verbose >= 2:
		lw = io.MultiWriter(lw, prefixWriter(r.log, prefix))
	case r.o.Verbose == 1:
		progress = kbuild.LineProgress(prefixWriter(r.log, prefix), 50)
	default:
		progress = kbuild.LineProgress(prefixWriter(r.log, prefix), 200)
	}
	if few && len(targets) < 50 && r.o.Verbose < 2 {
		progress = nil // a few objects: the step's own line is enough
	}
	return r.d.MakeWith(ctx, kbuild.MakeOptions{Arch: r.cfg.Arch, Jobs: r.jobs, Args: append(r.makeArgs(), extraArgs(few)...),
		Env: r.env(), Progress: progress, Log: lw, NoStepCount: few, CPU: cpu}, targets...)
}

// env is the environment of make: with ccache, paths under the build
// root are hashed relative to it (CCACHE_BASEDIR), so that a fresh build
// directory hits what another one compiled, unless the user chose a base.
func (r *runner) env() []string {
	if f := strings.Fields(r.o.CC); len(f) > 0 && baseName(f[0]) == "ccache" && os.Getenv("CCACHE_BASEDIR") == "" {
		return []string{"CCACHE_BASEDIR=" + r.o.BuildRoot}
	}
	return nil
}

func extraArgs(few bool) []string {
	if few {
		return []string{"-k"} // every object's result, not only the first failure's
	}
	return nil
}

// compilerID identifies the compiler a build uses.
func compilerID(ctx context.Context, cc string) string {
	out, err := exec.CommandContext(ctx, compiler(cc), "--version").Output()
	if err != nil {
		return cc
	}
	return string(out)
}

// lineFunc is a writer calling f for every line.
type lineFunc func(string)

func (f lineFunc) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		f(l)
	}
	return len(p), nil
}

func prefixWriter(w io.Writer, prefix string) io.Writer {
	return lineFunc(func(l string) { fmt.Fprintln(w, prefix+strings.TrimPrefix(l, "kbuild: ")) })
}
