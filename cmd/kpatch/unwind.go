package main

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"kpatch/plumbing/outdir"
	"kpatch/spec"
	"kpatch/unwind"
	"kpatch/unwind/core"
	"kpatch/unwind/report"
	"kpatch/unwind/symtab"
)

const unwindAbout = `Walks a user stack with the frame-pointer unwinder of the deferred
user-space unwinding series, with the kernel's semantics after a chosen
patch of a chosen revision (as the series description's walker facts say:
templates/linux/facts/walker.tmpl), and prints one frame a line: index, address, function+offset and
object. The input is an ELF core dump of an x86_64 or i386 (compat) process,
or a stack snapshot in the text form the QEMU self-tests print (see
unwind/doc.go); a snapshot's own kernel trace is shown beside the walk.`

// cmdUnwind implements "kpatch unwind".
func cmdUnwind(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("unwind", "(--core FILE | --snapshot FILE) [flags]", unwindAbout)
	corePath := fs.String("core", "", "walk the ELF core dump `FILE`: registers from NT_PRSTATUS, memory from PT_LOAD\nsegments and, where they hold no bytes, from the files NT_FILE maps")
	snapPath := fs.String("snapshot", "", "walk the stack snapshot in `FILE` (\"-\" for standard input)")
	index := fs.Int("index", 0, "walk snapshot number `N` (from 0) of a --snapshot file holding several")
	exe := fs.String("exe", "", "read function symbols from the executable `ELF`; a core places it at its AT_ENTRY,\nafter checking that it is the core's program (build id, else entry point and mappings),\na snapshot by its map: line or --exe-bias")
	exeBias := fs.String("exe-bias", "", "load bias `ADDR` of --exe for a snapshot without a map: line for it (default 0)")
	root := fs.String("root", "", "open the files a core or snapshot maps under `DIR` instead of /, for symbols and\nfor memory a core does not hold")
	thread := fs.Int("thread", 0, "walk the core's thread `TID` (default: the first NT_PRSTATUS, the thread that dumped)")
	sf := fs.seriesFlags(seriesFlagSpec{noTree: true,
		verHelp:  "the series revision `N` whose semantics apply (default: the newest whose x86_64 kernel\nhas a user unwinder for the task: v14, v13 for a 32-bit task; v15 on leave x86 to a\nseries of their own, --stack x86)",
		specHelp: "series description directory whose walker facts apply (default: the one built in)"})
	patch := fs.Int("patch", 0, "apply the kernel's semantics after patch `N` of the revision (default: its last; x86_64\nhas no user unwinder before the x86 frame pointer patch, and walks compat tasks as 64-bit\nwhere the revision has no compat patch)")
	maxEntries := fs.Int("max", 0, "stop after `N` entries (default: the kernel's, 511 on x86_64)")
	csBase := fs.String("cs-base", "", "code segment base `ADDR` of a compat task (default: the snapshot's, 0 for a core)")
	ssBase := fs.String("ss-base", "", "stack segment base `ADDR` of a compat task (default: the snapshot's, 0 for a core)")
	jsonOut := fs.jsonFlag() // addresses as "0x..." strings
	check := fs.Bool("check", false, "fail unless the snapshot's kernel trace equals the walker's")
	writeSnap := fs.String("write-snapshot", "", "also write the core thread's registers and stack to `FILE` as a snapshot (atomically;\nnever over an input)")
	stackBytes := fs.Int("stack-bytes", 0, "with --write-snapshot, capture at most `N` bytes of stack (default: up to the\nend of the stack's segment)")
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	usageError := func(msg string) error { return fs.usageError("%s", msg) }
	if (*corePath == "") == (*snapPath == "") {
		return usageError("give exactly one of --core and --snapshot")
	}
	if *writeSnap != "" && *corePath == "" {
		return usageError("--write-snapshot needs --core")
	}
	if *check && *snapPath == "" {
		return usageError("--check needs --snapshot")
	}
	sel, err := sf.selection(false)
	if err != nil {
		return badInput(err)
	}
	rev := sel.Revision
	byDefault := *sf.version == 0 && *sf.stack == "" && *patch == 0
	if *sf.version == 0 && *sf.stack == "" {
		rev = newestUnwinding(sel.Spec, false)
	}
	cfg, step, err := walkerAt(rev, *patch)
	if err != nil {
		return badInput(err)
	}
	if *maxEntries < 0 {
		return errors.New("--max must be positive")
	}
	bases := func(r *unwind.Regs) error {
		for _, b := range []struct {
			flag string
			val  string
			dst  *uint64
		}{{"cs-base", *csBase, &r.CSBase}, {"ss-base", *ssBase, &r.SSBase}} {
			if b.val == "" {
				continue
			}
			v, err := strconv.ParseUint(b.val, 0, 64)
			if err != nil {
				return fmt.Errorf("--%s: %v", b.flag, err)
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
	warn := func(err error) { fmt.Fprintf(stderr, "kpatch unwind: warning: %v\n", err) }
	if *corePath != "" {
		source = "core"
		c, err := core.Open(*corePath)
		if errors.Is(err, os.ErrNotExist) {
			return badInput(err) // no such core: give another
		}
		if err != nil {
			return err
		}
		defer c.Close()
		c.Root = *root
		t := c.Threads[0]
		if *thread != 0 {
			found := false
			var tids []string
			for _, th := range c.Threads {
				tids = append(tids, strconv.Itoa(th.PID))
				if th.PID == *thread {
					t, found = th, true
				}
			}
			if !found {
				return fmt.Errorf("no thread %d in %s (threads: %s)", *thread, *corePath, strings.Join(tids, " "))
			}
		}
		regs = t.Regs
		if regs.Compat && (*csBase == "" || *ssBase == "") && (t.CS&4 != 0 || t.SS&4 != 0) {
			warn(fmt.Errorf("thread %d uses LDT segments (cs=%#x ss=%#x) whose bases a core does not record; assuming 0, set --cs-base/--ss-base", t.PID, t.CS, t.SS))
		}
		if err := bases(&regs); err != nil {
			return err
		}
		mem = c
		if *exe != "" {
			var unsure *core.ExeUnverifiedError
			if err := c.CheckExe(*exe); errors.As(err, &unsure) {
				warn(err)
			} else if err != nil {
				return fmt.Errorf("--exe: %w", err)
			}
		}
		var errs []error
		tab, errs = c.Symbols(*exe)
		for _, err := range errs {
			warn(err)
		}
		if *writeSnap != "" {
			inputs := []string{*corePath}
			if *exe != "" {
				inputs = append(inputs, *exe)
			}
			for _, m := range c.Mappings {
				inputs = append(inputs, filepath.Join(*root, m.Path))
			}
			if err := notAnInput(*writeSnap, inputs); err != nil {
				return fmt.Errorf("--write-snapshot: %w", err)
			}
			snap, err := c.Snapshot(t, *stackBytes)
			if err != nil {
				return fmt.Errorf("--write-snapshot: %w", err)
			}
			snap.Regs = regs
			snap.Fields = map[string]string{"pid": strconv.Itoa(t.PID), "source": filepath.Base(*corePath)}
			if err := writeSnapshotFile(*writeSnap, snap); err != nil {
				return err
			}
		}
	} else {
		source = "snapshot"
		snap, err := readSnapshot(*snapPath, *index)
		if err != nil {
			return err
		}
		regs = snap.Regs
		if err := bases(&regs); err != nil {
			return err
		}
		mem = snap.Memory()
		kernel = snap.Kernel
		tab = &symtab.Table{}
		tab.AddMappings(snap.Maps)
		var exeInfo os.FileInfo
		if *exe != "" {
			bias, err := snapshotExeBias(*exe, *exeBias, snap.Maps, *root)
			if err != nil {
				return err
			}
			if err := tab.AddFile(*exe, bias); err != nil {
				return fmt.Errorf("--exe: %w", err)
			}
			exeInfo, _ = os.Stat(*exe)
		}
		// The files a snapshot from a QEMU guest maps are usually not on
		// this machine: only say so when --root says where they are.
		for _, err := range tab.AddMapped(snap.Maps, *root, exeInfo) {
			if *root != "" || !errors.Is(err, os.ErrNotExist) {
				warn(err)
			}
		}
	}

	if regs.Compat && byDefault {
		// The default for a 32-bit task: the newest revision that
		// unwinds one.
		rev = newestUnwinding(sel.Spec, true)
		if cfg, step, err = walkerAt(rev, 0); err != nil {
			return badInput(err)
		}
	}
	*patch = step
	if *maxEntries > 0 {
		cfg.MaxEntries = *maxEntries
	}
	if regs.Compat && cfg.CompatFP == nil {
		if err := compatRefused(sel.Spec, rev, step); err != nil {
			return badInput(err)
		}
		warn(fmt.Errorf("%s after patch %d has no compat unwinder: the 32-bit task is walked with 64-bit frames, as that kernel walks it", rev.Name(), step))
	}
	trace, err := cfg.Walk(mem, regs)
	if err != nil {
		return fmt.Errorf("%w", err)
	}
	r := report.New(trace, tab, report.Options{Source: source, Patch: *patch, Config: cfg, Compat: regs.Compat, Kernel: kernel})
	if *jsonOut {
		err = r.WriteJSON(stdout)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if *check {
		switch {
		case r.Match == nil:
			return errors.New("--check: the snapshot has no kernel trace")
		case !*r.Match:
			return fmt.Errorf("--check: the kernel's trace differs from the walker's at entry %d", r.Mismatch)
		}
	}
	return nil
}

// newestUnwinding returns the newest revision of the main series whose
// x86_64 kernel has a user unwinder (from v15 on the x86 patches are a
// series of their own), with compat one that has a compat unwinder too,
// or the newest revision if none has.
func newestUnwinding(sp *spec.Spec, compat bool) *spec.Revision {
	for i := len(sp.Revisions) - 1; i >= 0; i-- {
		r := sp.Revisions[i]
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
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(snaps) == 0 {
		return nil, fmt.Errorf("%s: %w", path, unwind.ErrNoSnapshot)
	}
	if index < 0 || index >= len(snaps) {
		return nil, fmt.Errorf("--index %d: %s holds %d snapshots", index, path, len(snaps))
	}
	return snaps[index], nil
}

// snapshotExeBias finds where a snapshot's executable is loaded: from
// --exe-bias, else from the map: line of the same file, else 0.
func snapshotExeBias(exe, flagBias string, maps []unwind.Mapping, root string) (uint64, error) {
	if flagBias != "" {
		v, err := strconv.ParseUint(flagBias, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("--exe-bias: %v", err)
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
