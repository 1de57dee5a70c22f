package report

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"kpatch/plumbing/outdir"
	"kpatch/spec"
	"kpatch/unwind"
	"kpatch/unwind/core"
	"kpatch/unwind/symtab"
)

// ErrBadInput is what errors.Is finds in an error of Walk that says an
// input cannot be used (a core or snapshot that is not there, a patch the
// revision lacks, a 32-bit task at a revision that does not unwind one):
// nothing was walked, and the fix is to give another (exit 2).
var ErrBadInput = errors.New("bad input")

// inputError marks err as bad input without changing its message.
type inputError struct{ err error }

func (e *inputError) Error() string   { return e.err.Error() }
func (e *inputError) Unwrap() []error { return []error{e.err, ErrBadInput} }

func badInput(err error) error { return &inputError{err} }

// Request is one walk of "kpatch unwind": what to walk, with which
// revision's semantics, and what to write besides the report. The string
// fields hold what the user typed; Walk checks them.
type Request struct {
	// Core and Snapshot name the input, exactly one of them: an ELF core
	// dump, or a file of stack snapshots ("-" for standard input) of which
	// Index is walked.
	Core, Snapshot string
	Index          int
	// Exe is the executable to read function symbols from, ExeBias its
	// load bias for a snapshot without a map: line for it (a number as
	// strconv.ParseUint with base 0 reads it; "" for none).
	Exe, ExeBias string
	// Root is the directory the files a core or snapshot maps are opened
	// under ("" for /).
	Root string
	// Thread is the core's thread to walk (0: the first NT_PRSTATUS).
	Thread int
	// Spec and Revision give the walker facts that apply; with
	// ChooseRevision (no -v and no --stack) the newest revision that
	// unwinds the task is chosen instead of Revision.
	Spec           *spec.Spec
	Revision       *spec.Revision
	ChooseRevision bool
	// Patch is the patch of the revision whose semantics apply (0: its
	// last).
	Patch int
	// MaxEntries overrides the kernel's entry limit when positive.
	MaxEntries int
	// CSBase and SSBase override the segment bases of a compat task
	// ("" for the input's own).
	CSBase, SSBase string
	// WriteSnapshot, for a core, is a file to write the walked thread's
	// registers and stack to, with at most StackBytes bytes of stack (0:
	// up to the end of the stack's segment).
	WriteSnapshot string
	StackBytes    int
	// Uprobe walks as the kernel does in a uprobe handler at the task's
	// ip (Linux 6.19's start-of-function rule looks at the probed
	// instruction): a core's instruction is read at ip, a snapshot's
	// from its uprobe= field.
	Uprobe bool
	// Warn receives what the walk doubts but does not refuse; nil drops it.
	Warn func(error)
}

// Walk does the walk r asks for and returns its report, with the
// input's kernel trace beside it when it has one.
func Walk(r Request) (*Report, error) {
	warn := r.Warn
	if warn == nil {
		warn = func(error) {}
	}
	rev := r.Revision
	byDefault := r.ChooseRevision && r.Patch == 0
	if r.ChooseRevision {
		rev = newestUnwinding(r.Spec, false)
	}
	cfg, step, err := walkerAt(rev, r.Patch)
	if err != nil {
		return nil, badInput(err)
	}
	if r.MaxEntries < 0 {
		return nil, badInput(fmt.Errorf("--max %d: must be positive (0: the kernel's limit)", r.MaxEntries))
	}
	bases := func(regs *unwind.Regs) error {
		for _, b := range []struct {
			flag string
			val  string
			dst  *uint64
		}{{"cs-base", r.CSBase, &regs.CSBase}, {"ss-base", r.SSBase, &regs.SSBase}} {
			if b.val == "" {
				continue
			}
			v, err := strconv.ParseUint(b.val, 0, 64)
			if err != nil {
				return badInput(fmt.Errorf("--%s %q: not an address (give one like 0x8000)", b.flag, b.val))
			}
			*b.dst = v
		}
		return nil
	}

	var (
		mem    unwind.Memory
		regs   unwind.Regs
		tab    *symtab.Table
		kernel []uint64
		source string
	)
	if r.Core != "" {
		source = "core"
		c, err := core.Open(r.Core)
		if err != nil {
			return nil, badInput(err) // no such core, or one cut short or not a core: give another
		}
		defer c.Close()
		c.Root = r.Root
		t := c.Threads[0]
		if r.Thread != 0 {
			found := false
			var tids []string
			for _, th := range c.Threads {
				tids = append(tids, strconv.Itoa(th.PID))
				if th.PID == r.Thread {
					t, found = th, true
				}
			}
			if !found {
				return nil, badInput(fmt.Errorf("--thread %d: no such thread in %s (threads: %s)", r.Thread, r.Core, strings.Join(tids, " ")))
			}
		}
		regs = t.Regs
		if regs.Compat && (r.CSBase == "" || r.SSBase == "") && (t.CS&4 != 0 || t.SS&4 != 0) {
			warn(fmt.Errorf("thread %d uses LDT segments (cs=%#x ss=%#x) whose bases a core does not record; assuming 0, set --cs-base/--ss-base", t.PID, t.CS, t.SS))
		}
		if err := bases(&regs); err != nil {
			return nil, err
		}
		mem = c
		if r.Uprobe {
			insn, err := probedInsn(c, regs.IP, r.Root)
			if err != nil {
				return nil, badInput(fmt.Errorf("--uprobe: %w", err))
			}
			regs.Uprobe, regs.UprobeInsn = true, insn
		}
		if r.Exe != "" {
			var unsure *core.ExeUnverifiedError
			if err := c.CheckExe(r.Exe); errors.As(err, &unsure) {
				warn(err)
			} else if err != nil {
				return nil, badInput(fmt.Errorf("--exe: %w", err))
			}
		}
		var errs []error
		tab, errs = c.Symbols(r.Exe)
		for _, err := range errs {
			warn(err)
		}
		if r.WriteSnapshot != "" {
			inputs := []string{r.Core}
			if r.Exe != "" {
				inputs = append(inputs, r.Exe)
			}
			for _, m := range c.Mappings {
				inputs = append(inputs, filepath.Join(r.Root, m.Path))
			}
			if err := notAnInput(r.WriteSnapshot, inputs); err != nil {
				return nil, badInput(fmt.Errorf("--write-snapshot: %w", err))
			}
			snap, err := c.Snapshot(t, r.StackBytes)
			if err != nil {
				return nil, fmt.Errorf("--write-snapshot: %w", err)
			}
			snap.Regs = regs
			snap.Fields = map[string]string{"pid": strconv.Itoa(t.PID), "source": filepath.Base(r.Core)}
			if err := writeSnapshotFile(r.WriteSnapshot, snap); err != nil {
				return nil, err
			}
		}
	} else {
		source = "snapshot"
		snap, err := readSnapshot(r.Snapshot, r.Index)
		if err != nil {
			return nil, err
		}
		regs = snap.Regs
		if err := bases(&regs); err != nil {
			return nil, err
		}
		if r.Uprobe && !regs.Uprobe {
			return nil, badInput(fmt.Errorf("--uprobe: snapshot %d of %s has no uprobe= field: it was not taken in a uprobe handler", r.Index, r.Snapshot))
		}
		mem = snap.Memory()
		kernel = snap.Kernel
		tab = &symtab.Table{}
		tab.AddMappings(snap.Maps)
		var exeInfo os.FileInfo
		if r.Exe != "" {
			bias, err := snapshotExeBias(r.Exe, r.ExeBias, snap.Maps, r.Root)
			if err != nil {
				return nil, err
			}
			if err := tab.AddFile(r.Exe, bias); err != nil {
				return nil, fmt.Errorf("--exe: %w", err)
			}
			exeInfo, _ = os.Stat(r.Exe)
		}
		// The files a snapshot from a QEMU guest maps are usually not on
		// this machine: only say so when --root says where they are.
		for _, err := range tab.AddMapped(snap.Maps, r.Root, exeInfo) {
			if r.Root != "" || !errors.Is(err, os.ErrNotExist) {
				warn(err)
			}
		}
	}

	if regs.Compat && byDefault {
		// The default for a 32-bit task: the newest revision that
		// unwinds one.
		rev = newestUnwinding(r.Spec, true)
		if cfg, step, err = walkerAt(rev, 0); err != nil {
			return nil, badInput(err)
		}
	}
	if r.MaxEntries > 0 {
		cfg.MaxEntries = r.MaxEntries
	}
	if regs.Compat && cfg.CompatFP == nil {
		if err := compatRefused(r.Spec, rev, step); err != nil {
			return nil, badInput(err)
		}
		warn(fmt.Errorf("%s after patch %d has no compat unwinder: the 32-bit task is walked with 64-bit frames, as that kernel walks it", rev.Name(), step))
	}
	if regs.Uprobe && !cfg.FuncStart {
		warn(fmt.Errorf("%s after patch %d has no start-of-function rule: a uprobe at ip changes nothing in its walk", rev.Name(), step))
	}
	trace, err := cfg.Walk(mem, regs)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	o := Options{Source: source, Patch: step, Config: cfg, Compat: regs.Compat, Kernel: kernel,
		Uprobe: regs.Uprobe, FuncStart: cfg.FuncStart && unwind.AtFunctionStart(regs, !cfg.NoIBT) && len(trace.Entries) > 1}
	return New(trace, tab, o), nil
}

// probedInsn returns the first 4 bytes of the instruction a uprobe at ip
// saved (auprobe->insn): the core's memory at ip or, where it holds the
// uprobe's int3 (0xcc), the file mapped there, from which the kernel
// copied it.
func probedInsn(c *core.File, ip uint64, root string) ([4]byte, error) {
	var insn [4]byte
	err := c.ReadAt(insn[:], ip)
	if err != nil {
		// An instruction at the end of the mapped text: one byte is
		// enough for push %bp.
		insn = [4]byte{}
		err = c.ReadAt(insn[:1], ip)
	}
	if err != nil {
		return insn, fmt.Errorf("cannot read the instruction at ip %#x: %w", ip, err)
	}
	if insn[0] != 0xcc {
		return insn, nil
	}
	m, ok := c.MappingAt(ip)
	if !ok {
		return insn, fmt.Errorf("the core holds an int3 at ip %#x and no file is mapped there to read the probed instruction from", ip)
	}
	f, err := os.Open(filepath.Join(root, m.Path))
	if err != nil {
		return insn, fmt.Errorf("the core holds an int3 at ip %#x; the probed instruction is in %w", ip, err)
	}
	defer f.Close()
	if n, err := f.ReadAt(insn[:], int64(m.Offset+ip-m.Start)); n == 0 {
		return insn, fmt.Errorf("the core holds an int3 at ip %#x; reading the probed instruction from %s: %v", ip, m.Path, err)
	}
	return insn, nil
}

// CheckKernel fails unless the report has a kernel trace equal to the
// walker's (kpatch unwind --check).
func (r *Report) CheckKernel() error {
	switch {
	case r.Match == nil:
		return errors.New("--check: the snapshot has no kernel trace")
	case !*r.Match:
		return fmt.Errorf("--check: the kernel's trace differs from the walker's at entry %d", r.Mismatch)
	}
	return nil
}

// newestUnwinding returns the newest revision of the main series whose
// x86_64 kernel has a user unwinder (from v15 on the x86 patches are a
// series of their own), with compat one that has a compat unwinder too,
// or the newest revision if none has.
func newestUnwinding(sp *spec.Spec, compat bool) *spec.Revision {
	// The main series' revisions and the series stacked on them, newest
	// first by date (a stacked series is newer than what it stacks on).
	all := append(append([]*spec.Revision{}, sp.Revisions...), sp.Stacked...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Date.After(all[j].Date) })
	for _, r := range all {
		if cfg, err := unwind.X86_64At(r, len(r.Patches)); err == nil && (!compat || cfg.CompatFP != nil) {
			return r
		}
	}
	return sp.Revisions[len(sp.Revisions)-1]
}

// walkerAt is the walker of revision r after patch (0: its last),
// refusing a patch the revision lacks.
func walkerAt(r *spec.Revision, patch int) (unwind.Config, int, error) {
	if patch == 0 {
		patch = len(r.Patches)
	}
	if patch < 1 || patch > len(r.Patches) {
		return unwind.Config{}, 0, fmt.Errorf("--patch %d: %s has patches 1 to %d", patch, r.Name(), len(r.Patches))
	}
	cfg, err := unwind.X86_64At(r, patch)
	if err != nil {
		return unwind.Config{}, 0, fmt.Errorf("--patch %d of %s (%s): %w", patch, r.Name(), r.Patches[patch-1].ID, err)
	}
	return cfg, patch, nil
}

// compatRefused is the error for a 32-bit task at a revision that does
// not unwind one: its kernel refuses compat tasks' deferred requests and
// has no compat frame-pointer unwinder (the series as merged). It names
// the revisions that do unwind 32-bit tasks. At a patch before the compat
// unwinder of a revision that gets one, the kernel walks a compat task
// with 64-bit frames, and so does the walker: nil.
func compatRefused(sp *spec.Spec, r *spec.Revision, patch int) error {
	facts, err := r.Facts(unwind.WalkerFacts, patch)
	if err != nil {
		return err
	}
	if !unwind.RefusesCompatDeferral(facts) {
		return nil
	}
	var do []string
	for _, c := range sp.Revisions {
		if cfg, err := unwind.X86_64At(c, len(c.Patches)); err == nil && cfg.CompatFP != nil {
			do = append(do, fmt.Sprintf("-v %d", c.Version))
		}
	}
	msg := fmt.Sprintf("%s does not unwind 32-bit tasks: it has no compat frame-pointer unwinder and its deferred requests fail for them", r.Name())
	if len(do) > 0 {
		msg += "; " + strings.Join(do, ", ") + " unwind them with 4-byte frames"
	}
	return errors.New(msg)
}

func readSnapshot(path string, index int) (*unwind.Snapshot, error) {
	var in io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, badInput(err) // no such snapshot file: give another
		}
		defer f.Close()
		in = f
	}
	snaps, err := unwind.ParseSnapshots(in)
	if err != nil {
		return nil, badInput(fmt.Errorf("%s: %w", path, err))
	}
	if len(snaps) == 0 {
		return nil, badInput(fmt.Errorf("%s: %w", path, unwind.ErrNoSnapshot))
	}
	if index < 0 || index >= len(snaps) {
		return nil, badInput(fmt.Errorf("--index %d: %s holds %d snapshots (give 0 to %d)", index, path, len(snaps), len(snaps)-1))
	}
	return snaps[index], nil
}

// snapshotExeBias finds where a snapshot's executable is loaded: from
// --exe-bias, else from the map: line of the same file, else 0.
func snapshotExeBias(exe, flagBias string, maps []unwind.Mapping, root string) (uint64, error) {
	if flagBias != "" {
		v, err := strconv.ParseUint(flagBias, 0, 64)
		if err != nil {
			return 0, badInput(fmt.Errorf("--exe-bias %q: not an address (give one like 0x555555554000)", flagBias))
		}
		return v, nil
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return 0, fmt.Errorf("--exe: %w", err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		return 0, fmt.Errorf("--exe: %w", err)
	}
	defer f.Close()
	for _, m := range maps {
		mi, err := os.Stat(filepath.Join(root, m.Path))
		same := err == nil && os.SameFile(mi, fi)
		if !same && filepath.Base(m.Path) != filepath.Base(exe) {
			continue
		}
		if bias, ok := symtab.Bias(f, m.Start, m.Offset); ok {
			return bias, nil
		}
	}
	return 0, nil
}

// notAnInput refuses an output path that is one of the inputs (the same
// file, also through symbolic or hard links).
func notAnInput(out string, inputs []string) error {
	oi, err := os.Stat(out)
	if err != nil {
		return nil // not there yet (or unreadable: creating it will say)
	}
	for _, in := range inputs {
		if ii, err := os.Stat(in); err == nil && os.SameFile(oi, ii) {
			if in == out {
				return fmt.Errorf("%s is an input of this run: refusing to write over it; choose another file", out)
			}
			return fmt.Errorf("%s is the same file as the input %s: refusing to write over it; choose another file", out, in)
		}
	}
	return nil
}

// writeSnapshotFile writes the snapshot to path atomically (package
// outdir's WriteFile: a temporary file beside it, beside the file a
// symbolic link points to, renamed over it once complete).
func writeSnapshotFile(path string, s *unwind.Snapshot) error {
	err := outdir.WriteFile(path, func(w io.Writer) error {
		_, err := s.WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("--write-snapshot: %w", err)
	}
	return nil
}
