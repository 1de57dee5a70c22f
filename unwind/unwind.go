package unwind

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Kind is the kind of unwinder a walk uses, the kernel's enum
// unwind_user_type. It is chosen once, when the walk starts.
type Kind uint8

const (
	// KindNone is UNWIND_USER_TYPE_NONE: no unwinder; the trace is the
	// initial instruction pointer alone.
	KindNone Kind = iota
	// KindFP is UNWIND_USER_TYPE_FP: native frame-pointer unwinding with
	// words of the kernel's sizeof(long).
	KindFP
	// KindCompatFP is UNWIND_USER_TYPE_COMPAT_FP: frame-pointer unwinding
	// of a compat (32-bit) task with 4-byte words.
	KindCompatFP
)

// String returns the kind's short name: "none", "fp" or "compat-fp".
func (k Kind) String() string {
	switch k {
	case KindNone:
		return "none"
	case KindFP:
		return "fp"
	case KindCompatFP:
		return "compat-fp"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Stop is the reason a walk ended.
type Stop uint8

const (
	// StopNone means the walk has not ended.
	StopNone Stop = iota
	// StopNoUnwinder: the walk's kind has no frame description (KindNone),
	// so unwind_user_next() went straight to done.
	StopNoUnwinder
	// StopWrongDirection: the computed CFA was not above the stack
	// pointer ("stack going in wrong direction?").
	StopWrongDirection
	// StopFaultRA: reading the return address faulted.
	StopFaultRA
	// StopFaultFP: reading the saved frame pointer faulted.
	StopFaultFP
	// StopMaxEntries: the trace reached Config.MaxEntries entries.
	StopMaxEntries
	// StopFPBelowSP: the frame pointer was below the stack pointer
	// (Config.StopFPBelowSP).
	StopFPBelowSP
	// StopMisaligned: the return address slot or CFA was not word
	// aligned (Config.Align).
	StopMisaligned
)

var stopNames = [...]string{
	StopNone:           "none",
	StopNoUnwinder:     "no-unwinder",
	StopWrongDirection: "wrong-direction",
	StopFaultRA:        "fault-ra",
	StopFaultFP:        "fault-fp",
	StopMaxEntries:     "max-entries",
	StopFPBelowSP:      "fp-below-sp",
	StopMisaligned:     "misaligned",
}

// String returns the stop reason's short name, for example "wrong-direction".
func (s Stop) String() string {
	if int(s) < len(stopNames) {
		return stopNames[s]
	}
	return fmt.Sprintf("Stop(%d)", uint8(s))
}

// Frame describes where a frame's canonical frame address (CFA), return
// address and saved frame pointer are: the kernel's struct
// unwind_user_frame. The CFA is the frame pointer (UseFP) or the stack
// pointer plus CFAOff; the return address is read at CFA+RAOff and, when
// FPOff is not zero, the caller's frame pointer at CFA+FPOff.
type Frame struct {
	CFAOff int32
	RAOff  int32
	FPOff  int32
	UseFP  bool
}

// String formats f like the C designated initializer it stands for.
func (f Frame) String() string {
	return fmt.Sprintf("{.cfa_off=%d, .ra_off=%d, .fp_off=%d, .use_fp=%t}", f.CFAOff, f.RAOff, f.FPOff, f.UseFP)
}

// X86Frame returns the x86 frame-pointer frame for a word of the given
// size in bytes: the CFA is two words above the frame pointer, the return
// address one word below the CFA and the saved frame pointer two words
// below it. It is ARCH_INIT_USER_FP_FRAME for word = sizeof(long) and
// ARCH_INIT_USER_COMPAT_FP_FRAME for word = sizeof(u32).
func X86Frame(word int32) Frame {
	return Frame{CFAOff: 2 * word, RAOff: -word, FPOff: -2 * word, UseFP: true}
}

// X86EntryFrame returns ARCH_INIT_USER_FP_ENTRY_FRAME(ws) of Linux 6.19
// (ae25884ad749) for a word of the given size: the frame at a function's
// first instruction, before push %bp, whose return address is the word at
// the stack pointer: cfa = sp + word, ra at cfa - word, the frame pointer
// left as it is (fp_off 0) and not checked against sp (use_fp false).
func X86EntryFrame(word int32) Frame {
	return Frame{CFAOff: word, RAOff: -word, FPOff: 0, UseFP: false}
}

var (
	// FrameX86_64 is ARCH_INIT_USER_FP_FRAME on x86_64: cfa = fp + 16,
	// ra at cfa - 8, fp at cfa - 16.
	FrameX86_64 = X86Frame(8)
	// FrameX86Compat is ARCH_INIT_USER_COMPAT_FP_FRAME on x86_64 with
	// CONFIG_IA32_EMULATION: cfa = fp + 8, ra at cfa - 4, fp at cfa - 8.
	FrameX86Compat = X86Frame(4)
)

// TaskSizeMaxX86_64 is TASK_SIZE_MAX of x86_64 with 4-level page tables:
// get_user() faults on any access that reaches it.
const TaskSizeMaxX86_64 = 0x7ffffffff000

// Config is the kernel's side of a walk: which unwinders the kernel was
// built with and the limits of its unwind_user() call.
type Config struct {
	// LongSize is the kernel's sizeof(long) in bytes, 8 or 4. Addresses
	// wrap at that width and native (KindFP) reads are that wide.
	LongSize int
	// FP is the frame of CONFIG_HAVE_UNWIND_USER_FP, nil if not enabled.
	FP *Frame
	// CompatFP is the frame of CONFIG_HAVE_UNWIND_USER_COMPAT_FP, nil if
	// not enabled. Compat tasks walk with it when it is set and with FP
	// otherwise.
	CompatFP *Frame
	// SegmentBases enables the x86 arch hooks of patch 14: in a compat
	// walk arch_unwind_user_init() adds the cs base to ip and the ss base
	// to sp and fp, and arch_unwind_user_next() adds them to the new ip
	// and fp after every step.
	SegmentBases bool
	// MaxEntries is the max_entries argument of unwind_user(): the
	// largest number of entries a trace holds. It must be positive.
	MaxEntries int
	// UserMax, if not zero, is the end of user address space
	// (TASK_SIZE_MAX): a read that reaches it faults like get_user().
	UserMax uint64
	// NextStub models patch 1, where unwind_user_next() is a stub that
	// returns -EINVAL without setting done: unwind_user() then repeats
	// the initial ip until MaxEntries.
	NextStub bool
	// StopFPBelowSP ends the walk when the frame pointer a frame is found
	// by is below the stack pointer (v13 on: "if (state->fp < state->sp)").
	StopFPBelowSP bool
	// Align, if not "", ends the walk at a misaligned slot: "ra" checks
	// cfa+ra_off against 4 bytes (compat or 4-byte longs) or 8 (v13),
	// "cfa" checks the CFA against sizeof(long) (v14 on), "word-size"
	// checks the CFA against the walk's word size, 4 in a compat walk
	// and sizeof(long) otherwise (Linux 6.19: cfa & (state->ws - 1)).
	Align string
	// FuncStart is Linux 6.19's start-of-function rule on x86
	// (ae25884ad749): while the walk is at its topmost frame, if
	// unwind_user_at_function_start() holds (AtFunctionStart: the walk
	// is made in a uprobe handler whose probed instruction is push %bp,
	// or ENDBR in a 64-bit task), the step uses X86EntryFrame of the
	// walk's word size instead of the frame-pointer frame.
	FuncStart bool
	// NoIBT is a kernel built without CONFIG_X86_KERNEL_IBT, whose
	// is_endbr() is false: only push %bp counts for FuncStart.
	NoIBT bool
	// ByteOrder of user memory; nil means little-endian.
	ByteOrder binary.ByteOrder
}

// ErrNoUnwinder is returned by X86_64 for a series revision whose x86_64
// kernel has no user-space unwinder.
var ErrNoUnwinder = errors.New("no user unwinder at this revision")

// Regs are the user registers a walk starts from.
type Regs struct {
	IP, SP, FP uint64
	// Compat is set for a task in compat (32-bit) mode, the kernel's
	// in_compat_mode(regs), on x86 !user_64bit_mode(regs).
	Compat bool
	// CSBase and SSBase are the base addresses of the task's code and
	// stack segments, as segment_base_address() reports them; zero for
	// the flat segments of ordinary 32-bit processes.
	CSBase, SSBase uint64
	// Uprobe says that the walk is made in a uprobe handler (the
	// kernel's current->utask->auprobe is set), and UprobeInsn holds the
	// first 4 bytes of the probed instruction as the uprobe saved them
	// (auprobe->insn: the instruction and those after it, from the
	// file). Config.FuncStart looks at them.
	Uprobe     bool
	UprobeInsn [4]byte
}

// ENDBR64 is the instruction endbr64 (f3 0f 1e fa) as a little-endian
// 32-bit word, the kernel's gen_endbr(); ENDBR32 (f3 0f 1e fb) differs
// from it in bit 24 only, which __is_endbr() masks.
const ENDBR64 = 0xfa1e0ff3

// AtFunctionStart is x86's unwind_user_at_function_start(regs) of Linux
// 6.19, is_uprobe_at_func_entry() of arch/x86/kernel/uprobes.c: the walk
// is made in a uprobe handler (regs.Uprobe) and the probed
// instruction is push %bp (0x55), or, in a 64-bit task of a kernel with
// CONFIG_X86_KERNEL_IBT (ibt), endbr64 or endbr32. A task stopped at a
// function's first instruction by anything else than a uprobe (an
// interrupt, a perf sample, a breakpoint of a debugger) does not count,
// nor does a uprobe after push %bp (at mov %sp,%bp): the kernel looks at
// the probed instruction, not at where the function starts.
//
// __is_endbr() also accepts the 4-byte NOP the kernel writes over its own
// ENDBR instructions (gen_endbr_poison(), whose value changed within 6.x);
// user code does not start functions with it, and AtFunctionStart does
// not model it.
func AtFunctionStart(regs Regs, ibt bool) bool {
	if !regs.Uprobe {
		return false
	}
	insn := regs.UprobeInsn
	if insn[0] == 0x55 {
		return true
	}
	return ibt && !regs.Compat && binary.LittleEndian.Uint32(insn[:])&^0x01000000 == ENDBR64
}

// State is the state of a walk, the kernel's struct unwind_user_state
// with the x86 struct arch_unwind_user_state folded in.
type State struct {
	IP, SP, FP     uint64
	Kind           Kind
	Done           bool
	CSBase, SSBase uint64
	// WS is the word size of the walk in bytes: 4 in a compat walk,
	// Config.LongSize otherwise (6.19's state->ws).
	WS int
	// Topmost is set until the first step succeeds (6.19's
	// state->topmost).
	Topmost bool
}

// Entry is one entry of a trace: the instruction pointer the kernel
// records, with the stack and frame pointers of the state it was read from.
type Entry struct {
	IP, SP, FP uint64
}

// Trace is the result of a walk.
type Trace struct {
	Kind    Kind
	Entries []Entry
	// Stop is why the walk ended.
	Stop Stop
	// Fault is the error of the read that faulted, for StopFaultRA and
	// StopFaultFP.
	Fault error
}

// IPs returns the instruction pointers of the trace: the entries of the
// kernel's struct unwind_stacktrace.
func (t *Trace) IPs() []uint64 {
	ips := make([]uint64, len(t.Entries))
	for i, e := range t.Entries {
		ips[i] = e.IP
	}
	return ips
}

// Unwinder walks a user stack one frame at a time, like the kernel's
// unwind_user_start() and unwind_user_next().
type Unwinder struct {
	// State is the current state. Its IP is the entry the next trace
	// entry records.
	State State
	// Stop is why the walk ended once State.Done is set.
	Stop Stop
	// Fault is the error of the read that ended the walk, if one did.
	Fault error

	cfg     Config
	mem     Memory
	mask    uint64
	buf     [8]byte
	atStart bool // Config.FuncStart and AtFunctionStart of the registers
}

func (c *Config) check() error {
	if c.LongSize != 4 && c.LongSize != 8 {
		return fmt.Errorf("LongSize %d: want 4 or 8", c.LongSize)
	}
	if c.MaxEntries <= 0 {
		return fmt.Errorf("MaxEntries %d: want > 0", c.MaxEntries)
	}
	return nil
}

// Start begins a walk of the stack in mem from regs, like
// unwind_user_start(): it picks the kind (the compat frame for a compat
// task if the kernel has one, else the native frame if it has one, else
// none) and, with SegmentBases, adds the segment bases of a compat walk.
// It does not check MaxEntries, which only Walk uses.
func (c Config) Start(mem Memory, regs Regs) (*Unwinder, error) {
	if c.LongSize != 4 && c.LongSize != 8 {
		return nil, fmt.Errorf("LongSize %d: want 4 or 8", c.LongSize)
	}
	if c.ByteOrder == nil {
		c.ByteOrder = binary.LittleEndian
	}
	u := &Unwinder{cfg: c, mem: mem, mask: ^uint64(0)}
	if c.LongSize == 4 {
		u.mask = 0xffffffff
	}
	s := &u.State
	switch {
	case c.CompatFP != nil && regs.Compat:
		s.Kind = KindCompatFP
	case c.FP != nil:
		s.Kind = KindFP
	default:
		s.Kind = KindNone
	}
	s.IP = regs.IP & u.mask
	s.SP = regs.SP & u.mask
	s.FP = regs.FP & u.mask
	s.WS = c.LongSize
	if s.Kind == KindCompatFP {
		s.WS = 4
	}
	s.Topmost = true
	u.atStart = c.FuncStart && AtFunctionStart(regs, !c.NoIBT)
	if c.SegmentBases && s.Kind == KindCompatFP {
		s.CSBase = regs.CSBase & u.mask
		s.SSBase = regs.SSBase & u.mask
		s.IP = (s.IP + s.CSBase) & u.mask
		s.SP = (s.SP + s.SSBase) & u.mask
		s.FP = (s.FP + s.SSBase) & u.mask
	}
	return u, nil
}

// Next steps to the caller's frame, like unwind_user_next(). It reports
// whether it did; when it did not, State.Done is set and Stop says why,
// except with Config.NextStub, where Next never steps and never ends the
// walk.
func (u *Unwinder) Next() bool {
	s := &u.State
	if s.Done || u.cfg.NextStub {
		return false
	}
	var f *Frame
	switch s.Kind {
	case KindCompatFP:
		f = u.cfg.CompatFP
	case KindFP:
		f = u.cfg.FP
	}
	if f == nil {
		return u.done(StopNoUnwinder, nil)
	}
	if s.Topmost && u.atStart {
		entry := X86EntryFrame(int32(s.WS))
		f = &entry
	}
	base := s.SP
	if f.UseFP {
		if u.cfg.StopFPBelowSP && s.FP < s.SP {
			return u.done(StopFPBelowSP, nil)
		}
		base = s.FP
	}
	cfa := (base + uint64(int64(f.CFAOff))) & u.mask
	if cfa <= s.SP {
		return u.done(StopWrongDirection, nil)
	}
	switch u.cfg.Align {
	case "ra":
		w := uint64(8)
		if u.cfg.LongSize == 4 || s.Kind == KindCompatFP {
			w = 4
		}
		if (cfa+uint64(int64(f.RAOff)))&u.mask&(w-1) != 0 {
			return u.done(StopMisaligned, nil)
		}
	case "cfa":
		if cfa&uint64(u.cfg.LongSize-1) != 0 {
			return u.done(StopMisaligned, nil)
		}
	case "word-size":
		if cfa&uint64(s.WS-1) != 0 {
			return u.done(StopMisaligned, nil)
		}
	}
	ra, err := u.word(cfa + uint64(int64(f.RAOff)))
	if err != nil {
		return u.done(StopFaultRA, err)
	}
	var fp uint64
	if f.FPOff != 0 {
		if fp, err = u.word(cfa + uint64(int64(f.FPOff))); err != nil {
			return u.done(StopFaultFP, err)
		}
	}
	s.IP = ra
	s.SP = cfa
	if f.FPOff != 0 {
		s.FP = fp
	}
	s.Topmost = false
	if u.cfg.SegmentBases && s.Kind == KindCompatFP {
		s.IP = (s.IP + s.CSBase) & u.mask
		s.FP = (s.FP + s.SSBase) & u.mask
	}
	return true
}

func (u *Unwinder) done(why Stop, err error) bool {
	u.State.Done = true
	u.Stop = why
	u.Fault = err
	return false
}

// word reads a user word at addr the way unwind_get_user_long() does: 4
// bytes in a compat walk, sizeof(long) bytes otherwise, zero-extended.
func (u *Unwinder) word(addr uint64) (uint64, error) {
	addr &= u.mask
	n := u.cfg.LongSize
	if u.State.Kind == KindCompatFP {
		n = 4
	}
	if m := u.cfg.UserMax; m != 0 && (addr >= m || uint64(n) > m-addr) {
		return 0, &FaultError{Addr: addr, Len: n, Reason: "beyond user address space"}
	}
	p := u.buf[:n]
	if err := u.mem.ReadAt(p, addr); err != nil {
		return 0, err
	}
	if n == 4 {
		return uint64(u.cfg.ByteOrder.Uint32(p)), nil
	}
	return u.cfg.ByteOrder.Uint64(p), nil
}

// Walk walks the stack in mem from regs like the kernel's unwind_user()
// with max_entries = c.MaxEntries: the first entry is the initial ip, then
// one entry per successful step, until the walk is done or the trace is
// full. The error is only for an invalid Config; how the walk ended is in
// Trace.Stop.
func (c Config) Walk(mem Memory, regs Regs) (*Trace, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	u, err := c.Start(mem, regs)
	if err != nil {
		return nil, err
	}
	t := &Trace{Kind: u.State.Kind, Entries: make([]Entry, 0, min(c.MaxEntries, 32))}
	for !u.State.Done {
		s := &u.State
		t.Entries = append(t.Entries, Entry{IP: s.IP, SP: s.SP, FP: s.FP})
		if len(t.Entries) >= c.MaxEntries {
			t.Stop = StopMaxEntries
			return t, nil
		}
		u.Next()
	}
	t.Stop, t.Fault = u.Stop, u.Fault
	return t, nil
}
