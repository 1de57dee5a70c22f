package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"kpatch/unwind/report"
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
		verHelp:  "the series revision `N` whose semantics apply (default: the newest state whose x86_64\nkernel has a user unwinder for the task: v16 with the x86 part as 6.19 merged it,\n--stack x86-6.19)",
		specHelp: "series description directory whose walker facts apply (default: the one built in)"})
	patch := fs.Int("patch", 0, "apply the kernel's semantics after patch `N` of the revision (default: its last; x86_64\nhas no user unwinder before the x86 frame pointer patch, and walks compat tasks as 64-bit\nwhere the revision has no compat patch)")
	maxEntries := fs.Int("max", 0, "stop after `N` entries (default: the kernel's, on x86_64 511 or, from v14 and in 6.19, 510)")
	csBase := fs.String("cs-base", "", "code segment base `ADDR` of a compat task (default: the snapshot's, 0 for a core)")
	ssBase := fs.String("ss-base", "", "stack segment base `ADDR` of a compat task (default: the snapshot's, 0 for a core)")
	jsonOut := fs.jsonFlag() // addresses as "0x..." strings
	check := fs.Bool("check", false, "fail unless the snapshot's kernel trace equals the walker's")
	writeSnap := fs.String("write-snapshot", "", "also write the core thread's registers and stack to `FILE` as a snapshot (atomically;\nnever over an input)")
	uprobe := fs.Bool("uprobe", false, "walk as the kernel does in a uprobe handler at the task's ip (perf or BPF on a uprobe\nthere): with Linux 6.19's start-of-function rule (--stack x86-6.19) the first step takes\nthe return address at sp when the probed instruction, read at ip (from the mapped file\nwhere the core holds the uprobe's int3), is push %bp, or ENDBR in a 64-bit task; a\nsnapshot's uprobe= field says the same")
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
	r, err := report.Walk(report.Request{
		Core: *corePath, Snapshot: *snapPath, Index: *index,
		Exe: *exe, ExeBias: *exeBias, Root: *root, Thread: *thread,
		Spec: sel.Spec, Revision: sel.Revision, ChooseRevision: *sf.version == 0 && *sf.stack == "",
		Patch: *patch, MaxEntries: *maxEntries, CSBase: *csBase, SSBase: *ssBase,
		WriteSnapshot: *writeSnap, StackBytes: *stackBytes, Uprobe: *uprobe,
		Warn: func(err error) { fmt.Fprintf(stderr, "kpatch unwind: warning: %v\n", err) },
	})
	if errors.Is(err, report.ErrBadInput) {
		return badInput(err)
	}
	if err != nil {
		return err
	}
	if *jsonOut {
		err = writeJSON(stdout, r)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if *check {
		return r.CheckKernel()
	}
	return nil
}
