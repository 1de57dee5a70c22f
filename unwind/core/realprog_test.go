package core_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"kpatch/internal/testenv"
	"kpatch/unwind"
	"kpatch/unwind/core"
	"kpatch/unwind/symtab"
)

// The real-program tests build testdata/chain.c with gcc -O0
// -fno-omit-frame-pointer, 64-bit and -m32, static (and 64-bit PIE), make
// it dump core in leaf() -- with gdb's gcore at a breakpoint, and by
// crashing so that the kernel writes the core -- and check that the
// walker's entries are gdb's backtrace, frame for frame, along the frame
// pointer chain, and that the symbols are the call chain the program makes.

type build struct {
	name  string
	flags []string
	src   string // default: chain.c
}

var builds = []build{
	{"64", []string{"-static"}, ""},
	{"32", []string{"-m32", "-static"}, ""},
	{"pie64", []string{"-fPIE", "-pie"}, ""},
}

type progCase struct {
	name   string
	args   []string
	chain  string // the expected functions, innermost first; f*N repeats
	builds []string
}

var progCases = []progCase{
	{name: "recurse", args: []string{"recurse", "5"}, chain: "leaf rec*5 main", builds: []string{"64", "32", "pie64"}},
	{name: "fnptr", args: []string{"fnptr"}, chain: "leaf target via_pointer main", builds: []string{"64", "32"}},
	{name: "signal", args: []string{"signal"}, chain: "leaf in_handler on_segv <sigreturn> sig_setup main", builds: []string{"64", "32"}},
	{name: "deep", args: []string{"deep", "600"}, chain: "leaf rec*510", builds: []string{"64", "32"}},
}

func expandChain(chain string) []string {
	var out []string
	for _, f := range strings.Fields(chain) {
		name, count, ok := strings.Cut(f, "*")
		n := 1
		if ok {
			n, _ = strconv.Atoi(count)
		}
		for range n {
			out = append(out, name)
		}
	}
	return out
}

var sigreturns = map[string]bool{"__restore_rt": true, "__restore": true, "__kernel_sigreturn": true, "__kernel_rt_sigreturn": true}

var (
	binMu   sync.Mutex
	binDir  string
	binErrs = map[string]string{}
	bins    = map[string]string{}
)

// program builds testdata/chain.c for b once per test binary run.
func program(t *testing.T, b build) string {
	t.Helper()
	testenv.Tool(t, "gcc", "gcc")
	if b.name == "32" {
		testenv.Build32(t)
	}
	binMu.Lock()
	defer binMu.Unlock()
	if msg, ok := binErrs[b.name]; ok {
		t.Skip(msg)
	}
	if p, ok := bins[b.name]; ok {
		return p
	}
	out := filepath.Join(binDirFor(t), "chain"+b.name)
	src := b.src
	if src == "" {
		src = "chain.c"
	}
	args := append([]string{"-O0", "-g", "-fno-omit-frame-pointer", "-Wall", "-o", out, "../testdata/" + src}, b.flags...)
	if msg, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		reason := fmt.Sprintf("gcc %s: %v: %s", strings.Join(b.flags, " "), err, bytes.TrimSpace(msg))
		if b.name == "32" {
			reason = "gcc -m32 -static does not work (is gcc-multilib installed?): " + reason
			binErrs[b.name] = reason
			t.Skip(reason)
		}
		t.Fatal(reason)
	}
	bins[b.name] = out
	return out
}

// binDirFor returns the directory of the programs and cores made once per
// test process (removed by TestMain), creating it.
func binDirFor(t *testing.T) string {
	t.Helper()
	binDirMu.Lock()
	defer binDirMu.Unlock()
	if binDir == "" {
		d, err := os.MkdirTemp("", "unwind-chain-")
		if err != nil {
			t.Fatal(err)
		}
		binDir = d
	}
	return binDir
}

var binDirMu sync.Mutex

// runnable skips the test when prog is a 32-bit program and this host does
// not run those.
func runnable(t *testing.T, prog string) {
	t.Helper()
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Class == elf.ELFCLASS32 {
		testenv.Run32(t)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	testenv.RemoveKpatchBinary()
	os.Exit(code)
}

func needGDB(t *testing.T) {
	t.Helper()
	testenv.Tool(t, "gdb", "gdb")
}

func runGDB(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "gdb", append([]string{"-batch", "-nx", "-ex", "set pagination off", "-ex", "set startup-with-shell off"}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gdb %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gcore stops prog in leaf() under gdb and writes its core. gdb runs once
// per program and arguments in a test process; each call returns a copy of
// that core in a temporary directory of t, the caller's to rename or cut.
func gcore(t *testing.T, prog string, args []string) string {
	runnable(t, prog)
	t.Helper()
	needGDB(t)
	key := prog + "\x00" + strings.Join(args, "\x00")
	gcoreMu.Lock()
	defer gcoreMu.Unlock()
	cached, ok := gcoreFiles[key]
	if !ok {
		dir, err := os.MkdirTemp(binDirFor(t), "gcore-")
		if err != nil {
			t.Fatal(err)
		}
		cached = filepath.Join(dir, "gcore")
		gargs := []string{"-ex", "handle SIGSEGV nostop noprint pass", "-ex", "break leaf", "-ex", "run",
			"-ex", "gcore " + cached, "-ex", "kill", "--args", prog}
		out := runGDB(t, append(gargs, args...)...)
		if _, err := os.Stat(cached); err != nil {
			t.Fatalf("gdb wrote no core: %v\n%s", err, out)
		}
		gcoreFiles[key] = cached
	}
	data, err := os.ReadFile(cached)
	if err != nil {
		t.Fatal(err)
	}
	corePath := filepath.Join(t.TempDir(), "gcore")
	if err := os.WriteFile(corePath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return corePath
}

var (
	gcoreMu    sync.Mutex
	gcoreFiles = map[string]string{} // program and arguments -> the core gdb wrote
)

// kernelCore runs prog with "crash" so that it faults in leaf() and the
// kernel dumps core into a temporary directory.
func kernelCore(t *testing.T, prog string, args []string) string {
	t.Helper()
	return kernelCoreFiltered(t, prog, args, "")
}

// kernelCoreFiltered is kernelCore with /proc/self/coredump_filter set to
// filter first (unless empty).
func kernelCoreFiltered(t *testing.T, prog string, args []string, filter string) string {
	runnable(t, prog)
	t.Helper()
	c, err := makeKernelCore(prog, args, filter)
	var skip errNoKernelCore
	switch {
	case errors.As(err, &skip):
		t.Skip(err)
	case err != nil:
		t.Fatal(err)
	}
	dir := t.TempDir()
	keep := filepath.Join(dir, filepath.Base(c))
	if err := os.Rename(c, keep); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Dir(c))
	return keep
}

// errNoKernelCore says why this machine's kernel writes no core the tests
// can read: a reason to skip, not a failure.
type errNoKernelCore string

func (e errNoKernelCore) Error() string { return string(e) }

// makeKernelCore runs prog with args and "crash" (coredump_filter set to
// filter first, unless empty) in a new temporary directory and returns the
// core the kernel wrote there; the caller removes the directory.
func makeKernelCore(prog string, args []string, filter string) (string, error) {
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	if p := strings.TrimSpace(string(pattern)); p == "" || strings.HasPrefix(p, "|") || strings.Contains(p, "/") {
		return "", errNoKernelCore(fmt.Sprintf("core_pattern %q does not write cores into the working directory", p))
	}
	dir, err := os.MkdirTemp("", "unwind-kernel-core-")
	if err != nil {
		return "", err
	}
	script := `ulimit -c unlimited && exec "$@"`
	if filter != "" {
		script = `ulimit -c unlimited && echo ` + filter + ` > /proc/self/coredump_filter && exec "$@"`
	}
	cmd := exec.Command("sh", "-c", script, "sh", prog)
	cmd.Args = append(cmd.Args, args...)
	cmd.Args = append(cmd.Args, "crash")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	err = cmd.Run()
	if err == nil {
		os.RemoveAll(dir)
		return "", errors.New("the program did not crash")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "core*"))
	if len(files) == 0 {
		os.RemoveAll(dir)
		return "", errNoKernelCore(fmt.Sprintf("the kernel wrote no core (%v; core_pattern %q, RLIMIT_CORE may be capped)", err, strings.TrimSpace(string(pattern))))
	}
	return files[0], nil
}

type gdbFrame struct {
	pc       uint64
	name     string
	sigtramp bool
}

var gdbFrameLine = regexp.MustCompile(`^GDBFRAME (\d+) (0x[0-9a-f]+) (\S+) (normal|sigtramp)$`)

const framesPy = `python
f = gdb.newest_frame()
i = 0
while f is not None and i < 5000:
    kind = "sigtramp" if f.type() == gdb.SIGTRAMP_FRAME else "normal"
    print("GDBFRAME %d %#x %s %s" % (i, f.pc(), f.name() or "??", kind))
    f = f.older()
    i += 1
end
`

// gdbBacktrace is gdb's backtrace of the core, from frame 0 to main: the
// one gdbBacktraces read for the same program and core bytes, else a gdb
// of its own.
func gdbBacktrace(t *testing.T, prog, corePath string) []gdbFrame {
	t.Helper()
	key, err := backtraceKey(prog, corePath)
	if err != nil {
		t.Fatal(err)
	}
	backtracesMu.Lock()
	cached, ok := backtraces[key]
	backtracesMu.Unlock()
	if ok {
		return cached
	}
	script := filepath.Join(t.TempDir(), "frames.gdb")
	if err := os.WriteFile(script, []byte(framesPy), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runGDB(t, "-ex", "set backtrace limit unlimited", "-x", script, prog, corePath)
	var frames []gdbFrame
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := gdbFrameLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pc, _ := strconv.ParseUint(m[2], 0, 64)
		frames = append(frames, gdbFrame{pc: pc, name: m[3], sigtramp: m[4] == "sigtramp"})
	}
	if len(frames) == 0 {
		t.Fatalf("gdb printed no frames:\n%s", out)
	}
	return frames
}

var (
	backtracesMu sync.Mutex
	backtraces   = map[string][]gdbFrame{} // backtraceKey -> gdb's frames
)

// backtraceKey names a program and the bytes of a core (the tests read
// copies of one core).
func backtraceKey(prog, corePath string) (string, error) {
	data, err := os.ReadFile(corePath)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return prog + "\x00" + hex.EncodeToString(sum[:]), nil
}

// gdbBacktraces reads the backtraces of several cores of prog with one
// gdb (core-file after core-file) for gdbBacktrace to return: gdb reads
// the program's debug information once instead of once per core. A core
// it printed no frames for is left to gdbBacktrace's own gdb.
func gdbBacktraces(t *testing.T, prog string, cores []string) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "frames.gdb")
	if err := os.WriteFile(script, []byte(framesPy), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-ex", "set backtrace limit unlimited", prog}
	for i, c := range cores {
		args = append(args, "-ex", "core-file "+c, "-ex", fmt.Sprintf("echo GDBCORE %d\\n", i), "-x", script)
	}
	out := runGDB(t, args...)
	var frames [][]gdbFrame
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "GDBCORE "); ok {
			if i, err := strconv.Atoi(n); err != nil || i != len(frames) {
				t.Fatalf("gdb printed %q after %d cores:\n%s", sc.Text(), len(frames), out)
			}
			frames = append(frames, nil)
			continue
		}
		m := gdbFrameLine.FindStringSubmatch(sc.Text())
		if m == nil || len(frames) == 0 {
			continue
		}
		pc, _ := strconv.ParseUint(m[2], 0, 64)
		frames[len(frames)-1] = append(frames[len(frames)-1], gdbFrame{pc: pc, name: m[3], sigtramp: m[4] == "sigtramp"})
	}
	for i, c := range cores {
		if i >= len(frames) || len(frames[i]) == 0 {
			continue
		}
		key, err := backtraceKey(prog, c)
		if err != nil {
			t.Fatal(err)
		}
		backtracesMu.Lock()
		backtraces[key] = frames[i]
		backtracesMu.Unlock()
	}
}

// gcores makes the gcore of prog for each of argsList that gcore has not
// made yet with one gdb (run, gcore and kill, again for the next
// arguments), for gcore to return. A core gdb did not write is left to
// gcore's own gdb.
func gcores(t *testing.T, prog string, argsList [][]string) {
	t.Helper()
	runnable(t, prog)
	needGDB(t)
	gcoreMu.Lock()
	defer gcoreMu.Unlock()
	gargs := []string{"-ex", "handle SIGSEGV nostop noprint pass", "-ex", "break leaf"}
	made := map[string]string{}
	for _, args := range argsList {
		key := prog + "\x00" + strings.Join(args, "\x00")
		if _, ok := gcoreFiles[key]; ok || made[key] != "" {
			continue
		}
		for _, a := range args {
			if strings.ContainsAny(a, " \t'\"\\") {
				return // gdb's run would split it: gcore runs it alone
			}
		}
		dir, err := os.MkdirTemp(binDirFor(t), "gcore-")
		if err != nil {
			t.Fatal(err)
		}
		made[key] = filepath.Join(dir, "gcore")
		gargs = append(gargs, "-ex", "run "+strings.Join(args, " "), "-ex", "gcore "+made[key], "-ex", "kill")
	}
	if len(made) == 0 {
		return
	}
	runGDB(t, append(gargs, prog)...)
	for key, p := range made {
		if _, err := os.Stat(p); err == nil {
			gcoreFiles[key] = p
		}
	}
}

// fpChain is the part of gdb's backtrace a frame-pointer walk can see: up
// to main, without the frame a signal interrupted (its return address is
// in the signal frame, not on the chain: the handler's saved frame
// pointer leads to the interrupted function's caller).
func fpChain(frames []gdbFrame) []gdbFrame {
	var out []gdbFrame
	for i := 0; i < len(frames); i++ {
		out = append(out, frames[i])
		if frames[i].name == "main" {
			break
		}
		if frames[i].sigtramp {
			i++
		}
	}
	return out
}

type walked struct {
	trace *unwind.Trace
	names []string
	locs  []symtab.Location
	file  *core.File
}

func walkCore(t *testing.T, corePath, exe string, patch int) walked {
	t.Helper()
	c, err := core.Open(corePath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cfg, err := unwind.X86_64(11, patch)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cfg.Walk(c, c.Threads[0].Regs)
	if err != nil {
		t.Fatal(err)
	}
	tab, errs := c.Symbols(exe)
	for _, err := range errs {
		t.Logf("symbols: %v", err)
	}
	w := walked{trace: tr, file: c}
	for i, e := range tr.Entries {
		loc := tab.Locate(e.IP, i > 0)
		w.locs = append(w.locs, loc)
		w.names = append(w.names, loc.Func)
	}
	return w
}

func checkAgainstGDB(t *testing.T, prog, corePath string, pc progCase, compat bool) {
	t.Helper()
	w := walkCore(t, corePath, prog, 14)
	wantKind := unwind.KindFP
	if compat {
		wantKind = unwind.KindCompatFP
	}
	if w.trace.Kind != wantKind {
		t.Errorf("kind %v, want %v", w.trace.Kind, wantKind)
	}
	gdb := fpChain(gdbBacktrace(t, prog, corePath))
	ips := w.trace.IPs()
	n := min(len(gdb), 511)
	if len(ips) < n {
		t.Fatalf("walker: %d entries (stop %v), gdb's frame-pointer chain has %d:\nwalker %x\ngdb    %v", len(ips), w.trace.Stop, len(gdb), ips, gdb)
	}
	for i := range n {
		if ips[i] != gdb[i].pc {
			t.Fatalf("entry %d: walker %#x (%s), gdb %#x (%s)", i, ips[i], w.names[i], gdb[i].pc, gdb[i].name)
		}
		if w.names[i] != gdb[i].name {
			t.Errorf("entry %d at %#x: walker says %s, gdb %s", i, ips[i], w.names[i], gdb[i].name)
		}
	}
	want := expandChain(pc.chain)
	for i, name := range want {
		got := w.names[i]
		if name == "<sigreturn>" && sigreturns[got] || got == name {
			continue
		}
		t.Fatalf("entry %d is %s, want %s; walker chain %v", i, got, name, w.names[:min(len(w.names), len(want)+2)])
	}
	if pc.name == "deep" && (len(ips) != 511 || w.trace.Stop != unwind.StopMaxEntries) {
		t.Errorf("deep chain: %d entries, stop %v; want 511, max-entries", len(ips), w.trace.Stop)
	}
	t.Logf("%d entries equal gdb's frames (gdb's frame-pointer chain: %d frames to main); walk stopped: %v after %s",
		n, len(gdb), w.trace.Stop, w.locs[len(w.locs)-1])
}

func TestRealPrograms(t *testing.T) {
	// First, per program, one gdb writes all its gcores and one reads the
	// backtraces of all its cores, gcore's and the kernel's; the subtests
	// then check each core as they would with a gdb of their own.
	kernelCores := map[string]string{} // build and arguments -> a kernel core
	coreDir := t.TempDir()
	for _, b := range builds {
		t.Run("gdb-"+b.name, func(t *testing.T) {
			prog := program(t, b)
			var argsList [][]string
			for _, pc := range progCases {
				if slices.Contains(pc.builds, b.name) {
					argsList = append(argsList, pc.args)
				}
			}
			gcores(t, prog, argsList)
			var cores []string
			for i, args := range argsList {
				cores = append(cores, gcore(t, prog, args))
				if c, err := makeKernelCore(prog, args, ""); err == nil {
					keep := filepath.Join(coreDir, fmt.Sprintf("%s-%d.core", b.name, i))
					if err := os.Rename(c, keep); err != nil {
						t.Fatal(err)
					}
					os.RemoveAll(filepath.Dir(c))
					kernelCores[b.name+"\x00"+strings.Join(args, "\x00")] = keep
					cores = append(cores, keep)
				}
			}
			gdbBacktraces(t, prog, cores)
		})
	}
	for _, pc := range progCases {
		for _, bn := range pc.builds {
			var b build
			for _, x := range builds {
				if x.name == bn {
					b = x
				}
			}
			for _, how := range []string{"gcore", "kernel"} {
				t.Run(pc.name+"/"+b.name+"/"+how, func(t *testing.T) {
					prog := program(t, b)
					var corePath string
					if how == "gcore" {
						corePath = gcore(t, prog, pc.args)
					} else if c, ok := kernelCores[b.name+"\x00"+strings.Join(pc.args, "\x00")]; ok {
						corePath = c
					} else {
						corePath = kernelCore(t, prog, pc.args)
					}
					checkAgainstGDB(t, prog, corePath, pc, b.name == "32")
				})
			}
		}
	}
}

// Before patch 14 an x86_64 kernel walks compat tasks with the 64-bit
// frame; the first entry is still the ip.
func TestCompatBeforePatch14(t *testing.T) {
	prog := program(t, builds[1])
	corePath := gcore(t, prog, []string{"recurse", "3"})
	for _, patch := range []int{12, 13} {
		w := walkCore(t, corePath, prog, patch)
		if w.trace.Kind != unwind.KindFP || w.names[0] != "leaf" {
			t.Errorf("patch %d: kind %v, first entry %s", patch, w.trace.Kind, w.names[0])
		}
	}
}

// A kernel core leaves out the text of file mappings; those bytes come from
// the mapped files that NT_FILE names.
func TestKernelCoreReadsMappedFiles(t *testing.T) {
	for _, b := range []build{builds[0], builds[2]} {
		t.Run(b.name, func(t *testing.T) {
			prog := program(t, b)
			corePath := kernelCore(t, prog, []string{"recurse", "2"})
			c, err := core.Open(corePath)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			entry, ok := c.Aux(core.AtEntry)
			if !ok {
				t.Fatal("no AT_ENTRY")
			}
			// The segment holding the entry point has no bytes in the core.
			var text *elf.Prog
			for _, p := range c.ELF.Progs {
				if p.Type == elf.PT_LOAD && entry >= p.Vaddr && entry < p.Vaddr+p.Memsz {
					text = p
				}
			}
			if text == nil || text.Filesz >= text.Memsz {
				t.Skipf("the kernel dumped the text segment (%+v); nothing to read from NT_FILE", text)
			}
			exe, err := elf.Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			defer exe.Close()
			bias := entry - exe.Entry
			want := make([]byte, 64)
			for _, p := range exe.Progs {
				if p.Type == elf.PT_LOAD && exe.Entry >= p.Vaddr && exe.Entry < p.Vaddr+p.Filesz {
					p.ReadAt(want, int64(exe.Entry-p.Vaddr))
				}
			}
			got := make([]byte, 64)
			if err := c.ReadAt(got, entry); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("text at AT_ENTRY %#x (bias %#x):\n got %x\nwant %x", entry, bias, got, want)
			}
			// Under another root the file is not found: a fault.
			c2, err := core.Open(corePath)
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			c2.Root = t.TempDir()
			if err := c2.ReadAt(got, entry); err == nil || !strings.Contains(err.Error(), "cannot be read") {
				t.Errorf("read with the file missing: %v", err)
			}
		})
	}
}

// kpatch unwind, once cmd/kpatch dispatches to it.
func TestCommand(t *testing.T) {
	prog := program(t, builds[0])
	dir := t.TempDir()
	kpatch := kpatchBinary(t)
	help, _ := exec.Command(kpatch, "unwind", "-h").CombinedOutput()
	if !strings.Contains(string(help), "usage: kpatch unwind") {
		t.Skip("cmd/kpatch does not dispatch \"kpatch unwind\" yet")
	}
	for _, flag := range []string{"-core", "-snapshot", "-exe", "-json", "-thread", "-patch", "-max", "-cs-base", "-ss-base", "-root", "-check", "-write-snapshot", "-stack-bytes", "-index", "-exe-bias"} {
		if !strings.Contains(string(help), flag) {
			t.Errorf("usage does not explain %s", flag)
		}
	}
	corePath := gcore(t, prog, []string{"fnptr"})
	snap := filepath.Join(dir, "fnptr.snap")
	out, err := exec.Command(kpatch, "unwind", "--core", corePath, "--exe", prog, "--write-snapshot", snap).CombinedOutput()
	if err != nil {
		t.Fatalf("kpatch unwind --core: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, fn := range []string{"leaf", "target", "via_pointer", "main"} {
		if !regexp.MustCompile(fmt.Sprintf(`^#%d +0x[0-9a-f]{16} %s\+0x[0-9a-f]+ %s$`, i, fn, regexp.QuoteMeta(prog))).MatchString(lines[i]) {
			t.Errorf("line %d: %q, want frame %s", i, lines[i], fn)
		}
	}
	// The snapshot of the same stack walks the same.
	out2, err := exec.Command(kpatch, "unwind", "--snapshot", snap, "--exe", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("kpatch unwind --snapshot: %v\n%s", err, out2)
	}
	if string(out2) != string(out) {
		t.Errorf("snapshot walk differs from the core walk:\n%s\n%s", out, out2)
	}
	if _, err := exec.Command(kpatch, "unwind", "--snapshot", snap, "--check").CombinedOutput(); err == nil {
		t.Error("--check passed on a snapshot without a kernel trace")
	}
	if out, err := exec.Command(kpatch, "unwind", "--core", corePath, "--snapshot", snap).CombinedOutput(); err == nil {
		t.Errorf("--core with --snapshot accepted: %s", out)
	}
}
