package kbuild

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"regexp"
)

// CompileError is one "file:line: error: message" of a failed build.
type CompileError struct {
	File    string // relative to the source tree when it is inside it
	Line    int
	Message string
	Context []string // the compiler's lines that follow (source excerpt)
}

// BuildError is a failed make.
type BuildError struct {
	Args   []string
	Err    error
	Errors []CompileError
	Tail   []string // the last lines of output when no error could be parsed
}

// Error implements the error interface.
func (e *BuildError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v", strings.Join(e.Args, " "), e.Err)
	for _, ce := range e.Errors {
		fmt.Fprintf(&b, "\n  %s:%d: error: %s", ce.File, ce.Line, ce.Message)
	}
	if len(e.Errors) == 0 {
		for _, l := range e.Tail {
			b.WriteString("\n  " + l)
		}
	}
	return b.String()
}

// Progress receives the build's progress: steps done so far, the total
// of the previous build of this directory (0 if unknown) and the current
// step line ("CC kernel/fork.o").
type Progress func(done, total int, step string)

var (
	stepRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s{2}([A-Z][A-Z0-9_-]{1,9})\s+(\S.*)$`) })
	errorRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+?):(\d+):(?:\d+:)? (?:fatal )?error: (.*)$`) })
	ldRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:ld|x86_64-linux-gnu-ld)(?:\.bfd)?: (.*)$`) })
)

const stepsFile = "kpatch-build-steps"

// Make runs make -jN ARCH=arch O=Obj targets in Src. Every kbuild step
// line goes to progress; the full output goes to log if it is not nil.
func (d *Dir) Make(ctx context.Context, arch string, jobs int, progress Progress, log io.Writer, targets ...string) error {
	return d.MakeWith(ctx, MakeOptions{Arch: arch, Jobs: jobs, Progress: progress, Log: log}, targets...)
}

// MakeOptions configures MakeWith.
type MakeOptions struct {
	Arch     string
	Jobs     int
	Args     []string // more make arguments and variables ("-k", "W=1", "CC=ccache gcc")
	Env      []string // more environment variables ("CCACHE_BASEDIR=/x")
	Progress Progress
	Log      io.Writer // the full output, if not nil
	// NoStepCount leaves the recorded size of a full build alone (for
	// builds of a few targets).
	NoStepCount bool
	// CPU, if not nil, gets the CPU time (user and system) of make and
	// of the processes it waited for added to it.
	CPU *time.Duration
}

// MakeWith runs make -jN ARCH=arch O=Obj args targets in Src, like Make.
func (d *Dir) MakeWith(ctx context.Context, o MakeOptions, targets ...string) error {
	arch, jobs, progress, log := o.Arch, o.Jobs, o.Progress, o.Log
	total := 0
	if b, err := os.ReadFile(filepath.Join(d.Obj, stepsFile)); err == nil && !o.NoStepCount {
		total, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	args := append([]string{"make", "-j" + strconv.Itoa(jobs), "ARCH=" + arch, "O=" + d.Obj}, o.Args...)
	args = append(args, targets...)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = d.Src
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	// make's children (sub-makes, compilers) are in its process group, so
	// that cancelling ends them all, not make alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var (
		mu    sync.Mutex
		lines []string
		done  int
		errs  []CompileError
	)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		readLines(pr, log, func(l string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, l)
			if len(lines) > 4000 {
				lines = lines[2000:]
			}
			if m := stepRE().FindStringSubmatch(l); m != nil {
				done++
				if progress != nil {
					progress(done, total, m[1]+" "+m[2])
				}
			} else if m := errorRE().FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[2])
				errs = append(errs, CompileError{File: d.rel(m[1]), Line: n, Message: m[3]})
			} else if m := ldRE().FindStringSubmatch(l); m != nil && strings.Contains(l, "undefined reference") {
				errs = append(errs, CompileError{File: "(link)", Message: m[1]})
			} else if len(errs) > 0 && len(errs[len(errs)-1].Context) < 4 && strings.HasPrefix(l, " ") {
				errs[len(errs)-1].Context = append(errs[len(errs)-1].Context, l)
			}
		})
	}()
	err := cmd.Run()
	pw.Close()
	wg.Wait()
	if o.CPU != nil && cmd.ProcessState != nil {
		*o.CPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		be := &BuildError{Args: args, Err: err, Errors: errs}
		if ctx.Err() != nil {
			be.Err = fmt.Errorf("%v (%w)", err, ctx.Err())
		}
		if len(errs) == 0 {
			be.Tail = lines[max(0, len(lines)-25):]
		}
		return be
	}
	if done > total/2 && !o.NoStepCount { // a real build, not a no-op: remember its size
		os.WriteFile(filepath.Join(d.Obj, stepsFile), []byte(strconv.Itoa(done)+"\n"), 0o644)
	}
	return nil
}

// maxLine is how much of one line of make's output is kept to be read
// (the whole line still goes to the log).
const maxLine = 64 << 10

// readLines calls line with every line of r (without its "\n" or
// "\r\n"), each cut to maxLine bytes, copies everything it reads to log
// when log is not nil, and reads r to its end whatever the lines hold: a
// line of any length (a macro expansion, a generated file echoed) never
// stops it, so that make never blocks writing to a pipe nobody reads.
func readLines(r io.Reader, log io.Writer, line func(string)) {
	br := bufio.NewReaderSize(r, maxLine)
	var cur []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if log != nil && len(chunk) > 0 {
			log.Write(chunk)
			if err != nil && err != bufio.ErrBufferFull && chunk[len(chunk)-1] != '\n' {
				log.Write([]byte{'\n'})
			}
		}
		if room := maxLine - len(cur); room > 0 {
			cur = append(cur, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(cur) > 0 || err == nil {
			l := strings.TrimSuffix(string(cur), "\n")
			line(strings.TrimSuffix(l, "\r"))
		}
		cur = cur[:0]
		if err != nil {
			break
		}
	}
	io.Copy(io.Discard, r) // a read error: still never leave make blocked
}

// Rel makes a path the compiler printed relative to the source tree if it
// is in it (paths relative to the object tree are resolved there first).
func (d *Dir) Rel(p string) string { return d.rel(p) }

// rel makes a compiler path relative to the source tree if it is in it.
func (d *Dir) rel(p string) string {
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(d.Obj, p)
		if _, err := os.Stat(abs); err != nil {
			abs = filepath.Join(d.Src, p)
		}
	}
	if r, err := filepath.Rel(d.Src, filepath.Clean(abs)); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// LineProgress returns a Progress that writes one line every `every`
// steps (and for the first step) to w: "kbuild: [ 420/1510] CC fs/open.o (31s)".
func LineProgress(w io.Writer, every int) Progress {
	start := time.Now()
	return func(done, total int, step string) {
		if done != 1 && done%every != 0 {
			return
		}
		var b bytes.Buffer
		if total > 0 {
			fmt.Fprintf(&b, "kbuild: [%4d/%d] %s", done, total, step)
		} else {
			fmt.Fprintf(&b, "kbuild: [%4d] %s", done, step)
		}
		fmt.Fprintf(&b, " (%s)\n", time.Since(start).Round(time.Second))
		w.Write(b.Bytes())
	}
}
