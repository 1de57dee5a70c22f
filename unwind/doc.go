// Package unwind is a reference implementation, in Go, of the user-space
// frame-pointer stack walk of the deferred unwinding series (v11): the
// walk kernel/unwind/user.c does, with the frames of
// arch/x86/include/asm/unwind_user.h and the entry limit of
// kernel/unwind/deferred.c, at any revision of the series. The QEMU
// self-tests judge the kernel's traces against it; it also walks core
// dumps (package kpatch/unwind/core) and captured stacks on its own.
//
// # The walk
//
// A walk starts from the user registers (Regs): ip, sp and fp. Its kind
// (Kind) is chosen once: KindCompatFP for a compat task when the kernel has
// a compat frame, else KindFP when it has a native frame, else KindNone.
// A Frame says where the caller's state is: the canonical frame address is
// cfa = (UseFP ? fp : sp) + CFAOff, the return address is the word at
// cfa + RAOff and, when FPOff is not zero, the caller's frame pointer is
// the word at cfa + FPOff. On x86_64 the native frame is cfa = fp + 16,
// ra at cfa - 8, fp at cfa - 16 (FrameX86_64); the compat frame uses
// 4-byte words: cfa = fp + 8, ra at cfa - 4, fp at cfa - 8
// (FrameX86Compat). A step sets ip = ra, sp = cfa and fp to the word read.
//
// Addresses are computed in the kernel's unsigned long (Config.LongSize)
// and wrap at its width; native words are that wide and compat words are 4
// bytes, zero-extended. With Config.SegmentBases (x86's compat patch) a compat
// walk adds the cs segment base to ip and the ss base to sp and fp when it
// starts, and the cs base to the new ip and the ss base to the new fp after
// each step, as arch_unwind_user_init() and arch_unwind_user_next() do.
//
// The walk ends (Stop) when the kind has no frame (StopNoUnwinder), when
// the cfa is not above sp (StopWrongDirection: "stack going in wrong
// direction", which also ends walks whose cfa wraps around), when reading
// the return address or the saved frame pointer faults (StopFaultRA,
// StopFaultFP; a read that reaches Config.UserMax, TASK_SIZE_MAX, faults
// like get_user()), or when the trace is full (StopMaxEntries); from v13
// on also when the frame pointer is below sp (StopFPBelowSP) or a slot is
// not word aligned (StopMisaligned, Config.Align). The trace (Trace) is
// what unwind_user() fills in: the first entry is the initial ip, then one
// entry per step, at most Config.MaxEntries: 511 on x86_64 once the unwind
// cache exists, the longs that fit in a 4096-byte allocation after the
// 8-byte struct unwind_cache header (CacheEntries).
//
// What the walker does at a patch is a fact of the series, not of this
// package: the spec's facts/walker.tmpl says it by patch id and revision
// (FromFacts reads it), and X86_64(version, patch) returns the
// configuration of an x86_64 kernel after patch N of revision V, refusing
// a patch the revision lacks. In v11 and v12, x86 has no user unwinder
// before x86-fp; x86-fp walks every task, compat ones too, with the 64-bit
// frame; x86-compat-fp adds the compat frame and the segment bases. v14
// has no compat frame again. Other states of the generic code are Configs
// too (for example NextStub before the fp patch, whose unwind_user_next()
// is a stub); the package's tests compile the series' own user.c at each
// patch and check that it and the walker agree.
//
// # Linux 6.19
//
// The x86 part as Linux 6.19 merged it (the x86-6.19 stack on v16) walks
// differently from every posted revision, and its walker facts say so
// (FromFacts):
//
//   - compat-fp: word-size (c79dd946e370): there is no compat unwinder
//     type; the frame is ARCH_INIT_USER_FP_FRAME(ws) in units of the
//     task's word size (unwind_user_word_size(): 4 for a compat task), so
//     a compat task walks with FrameX86Compat and 4-byte reads, with no
//     segment bases and with 64-bit address arithmetic.
//   - align: word-size: the CFA must be aligned to the walk's word size
//     (State.WS), 4 in a compat walk.
//   - fp-below-sp: stop, as from v13 on: only for a frame found by the
//     frame pointer.
//   - function-start: uprobe (ae25884ad749): while the walk is at its
//     topmost frame (State.Topmost) and unwind_user_at_function_start()
//     holds, the step uses ARCH_INIT_USER_FP_ENTRY_FRAME(ws)
//     (X86EntryFrame): cfa = sp + ws, the return address at sp, bp kept.
//     On x86 that is is_uprobe_at_func_entry(): the walk is made inside a
//     uprobe handler (Regs.Uprobe) whose probed instruction is push %bp,
//     or ENDBR in a 64-bit task of a kernel with CONFIG_X86_KERNEL_IBT
//     (AtFunctionStart). A task stopped at a function's first
//     instruction otherwise (an interrupt, a perf sample) is walked with
//     the frame-pointer frame and its caller is missed; gdb, which reads
//     the CFI, shows it. handler_chain() sets current->utask->auprobe
//     only while the uprobe's consumers run, and a deferred request is
//     walked in task work after that: only a walk made inside the
//     handler (a consumer calling unwind_user_faultable()) has the rule,
//     and the trace it leaves in the unwind cache is what a deferred
//     request of the same entry into the kernel then gets.
//
// unwind_user_word_size() is 0 for a task in virtual-8086 mode, which ends
// 6.19's walk before its first entry; no task of an x86_64 kernel is in
// that mode, and the walker does not model it.
//
// The differential test builds v6.19's kernel/unwind/user.c with its x86
// headers and is_uprobe_at_func_entry() from ../shared/revisions/v6.19
// and compares it with these facts' walker, after patch 12 and 16 of the
// 16.
//
// Memory is an interface, so the same walk runs on a captured stack
// (Segments, Snapshot), a core dump (core.File) or a live process
// (ProcessMemory).
//
// # One source of truth for the frames
//
// ParseFrameMacros evaluates the ARCH_INIT_USER_*_FRAME macros of a header
// as C, with modernc.org/cc/v4, for a given ABI and configuration
// (ParseFrameMacrosEnv), and CheckX86Frames compares them with the
// walker's frames, so a header generated from templates can be checked
// against the walker.
//
// # Snapshot text form
//
// A Snapshot is a task's registers and the bytes of its user stack from sp
// up, with, optionally, the trace the kernel produced, in a line-oriented
// text form a kernel test module can print with printk on a serial console:
//
//	snapshot: v=1 mode=64 ip=0x401136 sp=0x7ffc0000 bp=0x7ffc0010 cs_base=0x0 ss_base=0x0 tag=recurse
//	map: 0x400000 0x401000 0x0 /usr/bin/chain
//	stack: 0x7ffc0000 00112233445566778899aabbccddeeff3000fc7f000000005011400000000000
//	stack: 0x7ffc0020 0000000000000000000000000000000000000000000000007011400000000000
//	kernel: 0x401136 0x401150 0x401170
//	end: stack=64 kernel=3
//
// Each line starts with a tag; the tag may follow a prefix that ends in a
// space or "]" (printk's "[    3.141592] module: "), and lines without a
// tag are ignored, so a whole console log can be parsed (ParseSnapshots).
// Numbers are hexadecimal, with or without "0x", except the counts of the
// end line, which are decimal.
//
//   - "snapshot:" starts a snapshot. Its fields are key=value: v=1 (the
//     version), mode=64 or mode=compat (32 is taken for compat), ip, sp, bp
//     (fp is taken for bp), and optionally cs_base and ss_base (the segment
//     bases of a compat task, 0 if absent), and uprobe=HEX, 1 to 16
//     bytes of the probed instruction when the kernel walked the stack
//     in a uprobe handler (Regs.Uprobe, Regs.UprobeInsn: the first 4
//     count). Other keys (lowercase letters, digits and _, with values
//     without spaces), such as tag=, pid= or comm=, are kept in
//     Snapshot.Fields.
//   - "map: START END OFFSET PATH" is a file mapping of the task, for
//     symbols; the path is the rest of the line. Optional, any number.
//   - "stack: ADDR HEX" gives the bytes at ADDR, as hexadecimal pairs,
//     with or without spaces between bytes. ADDR is the address get_user()
//     reads, so for a compat task with a stack segment base it is
//     ss_base + offset. The writer puts 64 bytes on a line; lines may come
//     in any order, but may not overlap. The first line's address is
//     normally sp (plus ss_base).
//   - "kernel: IP IP ..." are entries of the kernel's trace, in order,
//     any number per line (the writer puts 8); a "kernel:" line with no
//     entries says the kernel's trace is empty.
//   - "end: stack=N kernel=M" ends the snapshot and says how many stack
//     bytes and kernel entries it has, so that lines lost on the console
//     are detected; both counts are optional. A snapshot also ends at the
//     next "snapshot:" line or at the end of the input.
//
// The lines Snapshot.WriteTo writes stay under 160 characters (a map line
// with a long path may be longer), so with a printk prefix they fit in 200.
// Errors are *SyntaxError, with the line number.
package unwind
