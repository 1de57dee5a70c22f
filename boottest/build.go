package boottest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"kpatch/series/standin"

	"kpatch/plumbing/cpio"
	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/outdir"
	"kpatch/series"
)

// FactsHeader is the header, written next to the driver and the programs,
// that gives them the revision's Expectations as C macros.
const FactsHeader = "kpatch_unwind_facts.h"

// Arch is the kernel architecture the harness builds.
const Arch = "x86_64"

// Fragment is added to tinyconfig. The driver's Kconfig selects what the
// deferred unwinder needs (UNWIND_USER); the rest is what the boot and the
// test programs need.
const Fragment = `CONFIG_64BIT=y
CONFIG_IA32_EMULATION=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_PRINTK=y
CONFIG_PRINTK_TIME=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_BINFMT_ELF=y
CONFIG_PROC_FS=y
CONFIG_HIGH_RES_TIMERS=y
CONFIG_BUG=y
CONFIG_DEBUG_BUGVERBOSE=y
CONFIG_X86_LOCAL_APIC=y
CONFIG_KPATCH_UNWIND_SELFTEST=y
`

// DebugFragment is added to Fragment for a debug boot (BuildOptions.Debug):
// KASAN (which needs sysfs and the full SLUB), lockdep's proofs of
// locking correctness and might_sleep()'s checks in atomic context, as
// syzbot's and the robot's debug kernels have them.
const DebugFragment = `CONFIG_DEBUG_KERNEL=y
CONFIG_SYSFS=y
# CONFIG_SLUB_TINY is not set
CONFIG_KASAN=y
CONFIG_STACKTRACE=y
CONFIG_PROVE_LOCKING=y
CONFIG_DEBUG_ATOMIC_SLEEP=y
`

// DebugRequired are the symbols a debug boot's configuration must have.
var DebugRequired = map[string]string{"KASAN": "y", "PROVE_LOCKING": "y", "DEBUG_ATOMIC_SLEEP": "y"}

// Required are the symbols whose values olddefconfig must produce, else
// Build explains which one is missing and why; the unwinder's own symbols
// (UNWIND_USER, HAVE_UNWIND_USER_FP, HAVE_UNWIND_USER_COMPAT_FP) are added
// from the revision's configuration facts (Expectations.Config).
var Required = map[string]string{
	"IA32_EMULATION":         "y",
	"KPATCH_UNWIND_SELFTEST": "y",
	"SERIAL_8250_CONSOLE":    "y",
	"BLK_DEV_INITRD":         "y",
	"PROC_FS":                "y",
	"UPROBES":                "y",
}

// BuildOptions configures Build.
type BuildOptions struct {
	BuildDir string // reused between runs
	// Files replace some of the series' final files, for negative tests
	// (a deliberately broken template) without an edited spec copy.
	Files   map[string][]byte
	Jobs    int       // make -j; 0 = NumCPU+1
	Log     io.Writer // progress
	Verbose int       // 0: progress every 200 steps; 1: every 50; 2+: full make output
	// Debug builds the kernel with DebugFragment (KASAN, PROVE_LOCKING,
	// DEBUG_ATOMIC_SLEEP), in DefaultDebugBuildDir unless BuildDir says.
	Debug bool
	// Exec is a shell command the guest runs instead of the cases, with
	// a static busybox (Busybox) as its shell and commands; its output
	// goes to the console, its exit status to Report.Exec.
	Exec string
}

// Busybox is the static busybox that Exec puts in the initramfs, with the
// Debian package that has it.
var Busybox = Tool{"busybox", "busybox-static", "to run a command in the guest (--exec)"}

// ErrNoBusybox is the error of a build with Exec where no static busybox
// is installed.
var ErrNoBusybox = errors.New("no static busybox")

// staticBusybox returns the path of a statically linked busybox in $PATH.
func staticBusybox() (string, error) {
	p, err := exec.LookPath(Busybox.Name)
	if err != nil {
		return "", fmt.Errorf("%w: %s %s (Debian package %s): apt-get install %s", ErrNoBusybox, Busybox.Name, Busybox.Why, Busybox.Package, Busybox.Package)
	}
	f, err := elf.Open(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	defer f.Close()
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%w: %s is linked dynamically and the guest has no libc: apt-get install %s", ErrNoBusybox, p, Busybox.Package)
		}
	}
	return p, nil
}

// Artifacts are the products of Build.
type Artifacts struct {
	Kernel    string            // bzImage
	Vmlinux   string            // ELF vmlinux
	Initramfs string            // cpio
	Programs  map[string]string // program name -> host path (for symbols)
	Changed   []string          // source files rewritten by this build
	Config    map[string]string
	// StandIns are what the revision needs of its base that the base
	// lacks, stood in for in this build (package standin).
	StandIns []standin.Need
}

// BuildKernelError is a kernel build failure with the patches that
// touched each failing file.
type BuildKernelError struct {
	Err     *kbuild.BuildError
	Patches map[string][]int // file -> patch numbers
}

// Error implements the error interface.
func (e *BuildKernelError) Error() string {
	var b strings.Builder
	b.WriteString("kernel build failed:")
	for _, ce := range e.Err.Errors {
		fmt.Fprintf(&b, "\n  %s:%d: error: %s", ce.File, ce.Line, ce.Message)
		for _, c := range ce.Context {
			b.WriteString("\n      " + c)
		}
		switch p := e.Patches[ce.File]; {
		case strings.HasPrefix(ce.File, DriverDir+"/"):
			b.WriteString("\n    (in kpatch's test driver, not in the series)")
		case len(p) > 0:
			fmt.Fprintf(&b, "\n    file touched by patch %s", joinInts(p))
		default:
			b.WriteString("\n    file not touched by the series (an API the series changed?)")
		}
	}
	if len(e.Err.Errors) == 0 {
		b.WriteString("\n" + e.Err.Error())
	}
	return b.String()
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// overlay returns the files laid over the base tree: the series' final
// files, the driver, and the two lines that hook the driver's directory
// into the top-level Kbuild and Kconfig.
// applyStandIns adds to files the stand-ins for what the revision needs of
// its base and the base lacks (package standin), after its last patch.
func applyStandIns(s *series.Series, files map[string][]byte, base kbuild.BaseFile) ([]standin.Need, error) {
	return standin.Apply(s.Revision, len(s.Revision.Patches), files, base)
}

func overlay(s *series.Series, replaced map[string][]byte, base kbuild.BaseFile, factsHeader []byte) (map[string][]byte, error) {
	files := map[string][]byte{}
	for k, v := range s.FinalFiles() {
		files[k] = v
	}
	for k, v := range replaced {
		files[k] = v
	}
	for _, n := range []string{"kpatch_unwind_test.c", "kpatch_unwind.h", "Kconfig", "Makefile"} {
		files[DriverDir+"/"+n] = asset("driver/" + n)
	}
	files[DriverDir+"/"+FactsHeader] = factsHeader
	hooks := map[string]string{
		"Kbuild":  "obj-y\t\t\t+= " + DriverDir + "/\n",
		"Kconfig": "\nsource \"" + DriverDir + "/Kconfig\"\n",
	}
	for f, line := range hooks {
		content, ok := files[f]
		if !ok {
			b, exists, err := base(f)
			if err != nil {
				return nil, err
			}
			if !exists {
				return nil, fmt.Errorf("the base tree has no %s to hook the driver into", f)
			}
			content = b
		}
		files[f] = append(append([]byte{}, content...), line...)
	}
	return files, nil
}

// Build checks that the build tools are installed (CheckTools), prepares
// the build directory and builds the kernel, the test programs and the
// initramfs. It holds the build directory's lock (see
// Lock) while it works.
func Build(ctx context.Context, s *series.Series, o BuildOptions) (*Artifacts, error) {
	if err := CheckTools(ctx, false); err != nil {
		return nil, err
	}
	if o.BuildDir == "" {
		d, err := defaultDir(o.Debug)
		if err != nil {
			return nil, err
		}
		o.BuildDir = d
	}
	unlock, err := Lock(ctx, o.BuildDir, o.Log)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return build(ctx, s, o)
}

// Lock takes an exclusive lock on the build directory dir (creating it),
// waiting for another kpatch that holds it until ctx is done, so that two
// runs never share a build directory at the same time. It returns the
// function that releases the lock.
func Lock(ctx context.Context, dir string, log io.Writer) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return outdir.Lock(ctx, filepath.Join(dir, ".lock"), log, "the build directory "+dir)
}

func build(ctx context.Context, s *series.Series, o BuildOptions) (*Artifacts, error) {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	d := kbuild.NewDir(o.BuildDir)
	if !s.Tree.IsGit() {
		return nil, fmt.Errorf("%s is a plain directory: the boot test unpacks its base from git, give a git repository with --tree", s.Tree.Dir)
	}
	exp, err := ExpectationsOf(s.Revision)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "kbuild: source tree %s (base %s of %s)\n", d.Src, s.Tree.Base, s.Tree.Dir)
	commit, err := d.UnpackBase(ctx, s.Tree.Dir, s.Tree.Base)
	if err != nil {
		return nil, err
	}
	baseFile := kbuild.GitBaseFile(ctx, s.Tree.Dir, commit)
	files, err := overlay(s, o.Files, baseFile, exp.Header())
	if err != nil {
		return nil, err
	}
	standIns, err := applyStandIns(s, files, baseFile)
	if err != nil {
		return nil, err
	}
	for _, n := range standIns {
		fmt.Fprintf(logw, "kbuild: stand-in: %s\n", n)
	}
	changed, err := d.Sync(files, baseFile)
	if err != nil {
		return nil, err
	}
	a := &Artifacts{Changed: changed, Programs: map[string]string{}, StandIns: standIns}
	if len(changed) > 0 {
		fmt.Fprintf(logw, "kbuild: %d file(s) changed: %s\n", len(changed), strings.Join(first(changed, 8), " "))
	} else {
		fmt.Fprintf(logw, "kbuild: sources unchanged since the last build\n")
	}
	frag, want := Fragment, exp.required()
	if o.Debug {
		frag += DebugFragment
		for k, v := range DebugRequired {
			want[k] = v
		}
	}
	a.Config, err = d.Configure(ctx, Arch, frag, want)
	if err != nil {
		return nil, err
	}
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU() + 1
	}
	var progress kbuild.Progress
	var makeLog io.Writer
	switch {
	case o.Verbose >= 2:
		makeLog = logw
	case o.Verbose == 1:
		progress = kbuild.LineProgress(logw, 50)
	default:
		progress = kbuild.LineProgress(logw, 200)
	}
	if err := d.Make(ctx, Arch, jobs, progress, makeLog, "bzImage"); err != nil {
		var be *kbuild.BuildError
		if errors.As(err, &be) {
			pk := &BuildKernelError{Err: be, Patches: map[string][]int{}}
			for _, ce := range be.Errors {
				pk.Patches[ce.File] = s.PatchesTouching(ce.File)
			}
			return nil, pk
		}
		return nil, err
	}
	a.Kernel = filepath.Join(d.Obj, "arch/x86/boot/bzImage")
	a.Vmlinux = filepath.Join(d.Obj, "vmlinux")
	if err := buildUserland(ctx, o.BuildDir, a, exp.Header(), o.Exec); err != nil {
		return nil, err
	}
	return a, nil
}

func first(v []string, n int) []string {
	if len(v) <= n {
		return v
	}
	return append(append([]string{}, v[:n]...), fmt.Sprintf("... (%d more)", len(v)-n))
}

// CFlags are the flags of the test programs: static, no optimization and
// frame pointers everywhere, so that every function has an FP frame.
var CFlags = []string{"-static", "-O0", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-fno-pie", "-no-pie", "-Wall", "-Werror"}

// buildUserland compiles the programs (only when their sources or flags
// changed) and writes the initramfs.
func buildUserland(ctx context.Context, dir string, a *Artifacts, factsHeader []byte, execCmd string) error {
	pdir := filepath.Join(dir, "progs")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return err
	}
	for _, n := range []string{"unwind_test.c", "init.c"} {
		if _, err := kbuild.WriteIfChanged(filepath.Join(pdir, n), asset("prog/"+n), 0o644); err != nil {
			return err
		}
	}
	if _, err := kbuild.WriteIfChanged(filepath.Join(pdir, "kpatch_unwind.h"), asset("driver/kpatch_unwind.h"), 0o644); err != nil {
		return err
	}
	if _, err := kbuild.WriteIfChanged(filepath.Join(pdir, FactsHeader), factsHeader, 0o644); err != nil {
		return err
	}
	type prog struct {
		out, src string
		flags    []string
	}
	progs := []prog{
		{"unwind_test64", "unwind_test.c", []string{"-m64"}},
		{"unwind_test32", "unwind_test.c", []string{"-m32"}},
		{"init", "init.c", []string{"-m64"}},
	}
	for _, p := range progs {
		args := append(append(append([]string{}, p.flags...), CFlags...), "-I", pdir, "-o", filepath.Join(pdir, p.out), filepath.Join(pdir, p.src))
		h := sha256.New()
		h.Write(asset("prog/" + p.src))
		h.Write(asset("driver/kpatch_unwind.h"))
		h.Write(factsHeader)
		h.Write([]byte(strings.Join(args, "\x00")))
		sum := hex.EncodeToString(h.Sum(nil))
		stamp := filepath.Join(pdir, p.out+".stamp")
		if b, err := os.ReadFile(stamp); err == nil && string(b) == sum {
			if _, err := os.Stat(filepath.Join(pdir, p.out)); err == nil {
				a.Programs[p.out] = filepath.Join(pdir, p.out)
				continue
			}
		}
		cmd := exec.CommandContext(ctx, "gcc", args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			hint := ""
			if strings.Contains(string(out), "bits/") || strings.Contains(string(out), "gnu/stubs-32.h") {
				hint = " (32-bit libc missing? apt-get install gcc-multilib)"
			}
			return fmt.Errorf("gcc %s%s: %v\n%s", strings.Join(args, " "), hint, err, out)
		}
		if err := os.WriteFile(stamp, []byte(sum), 0o644); err != nil {
			return err
		}
		a.Programs[p.out] = filepath.Join(pdir, p.out)
	}
	var buf bytes.Buffer
	w := cpio.NewWriter(&buf)
	if err := w.CharDev("dev/console", 0o600, 5, 1); err != nil {
		return err
	}
	if err := w.Dir("proc", 0o755); err != nil {
		return err
	}
	names := []string{"init", "unwind_test64", "unwind_test32"}
	sort.Strings(names)
	for _, n := range names {
		data, err := os.ReadFile(a.Programs[n])
		if err != nil {
			return err
		}
		path := "bin/" + n
		if n == "init" {
			path = "init"
		}
		if err := w.File(path, 0o755, data); err != nil {
			return err
		}
	}
	if execCmd != "" {
		bb, err := staticBusybox()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(bb)
		if err != nil {
			return err
		}
		if err := w.File("bin/busybox", 0o755, data); err != nil {
			return err
		}
		if err := w.File("kpatch-exec", 0o644, []byte(execCmd+"\n")); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	a.Initramfs = filepath.Join(dir, "initramfs.cpio")
	_, err := kbuild.WriteIfChanged(a.Initramfs, buf.Bytes(), 0o644)
	return err
}
