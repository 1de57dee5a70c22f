// SPDX-License-Identifier: GPL-2.0
/*
 * kpatch deferred-unwind test program, built static twice: -m64 and -m32,
 * with -O0 -fno-omit-frame-pointer so that every function below has a
 * frame-pointer frame. It drives /proc/kpatch_unwind, prints one KTAP
 * subtest block (4-space indented; init prints the block's result line)
 * and, for every trace the kernel delivers, an "expect:" line naming the
 * call chain it made, which the host checks against the symbolized trace.
 *
 * System calls that request traces are made by ku_syscall() with inline
 * assembly, so the first frame is a frame-pointer function of ours and not
 * a libc wrapper without a frame.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kpatch_unwind.h"
#include "kpatch_unwind_facts.h"	/* the revision's expectations (spec facts) */

#ifdef __x86_64__
#define MODE "x86_64"
/* Deferred requests of this task are refused (-EINVAL, no callback). */
#define REFUSED 0
#else
#define MODE "ia32"
#define REFUSED KU_COMPAT_REFUSED
#endif

/* What unwind_deferred_request() returns: 1 and 2 up to v13, 1 and 1 from v14. */
#define UNWIND_ALREADY_PENDING	KU_REQ_PENDING
#define UNWIND_ALREADY_EXECUTED	KU_REQ_DONE
#define ID_NAME (KU_COOKIE ? "cookie" : "timestamp")

#define NOINLINE __attribute__((noinline))

static int fd;
static char reason[256];

static void out(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (write(fd, buf, n) < 0)
		_exit(99);
}

NOINLINE long ku_syscall(unsigned long cmd, unsigned long arg)
{
	long ret;
#ifdef __x86_64__
	asm volatile("syscall" : "=a"(ret)
		     : "0"(16L), "D"((long)fd), "S"(cmd), "d"(arg)
		     : "rcx", "r11", "memory");
#else
	asm volatile("int $0x80" : "=a"(ret)
		     : "0"(54L), "b"(fd), "c"(cmd), "d"(arg)
		     : "memory");
#endif
	return ret;
}

NOINLINE long rec(int n, unsigned long cmd, unsigned long arg)
{
	long r;

	if (n <= 1)
		r = ku_syscall(cmd, arg);
	else
		r = rec(n - 1, cmd, arg);
	return r;
}

static int result(struct ku_result *r)
{
	long ret;

	memset(r, 0, sizeof(*r));
	ret = ku_syscall(KU_RESULT, (unsigned long)r);
	if (ret) {
		snprintf(reason, sizeof(reason), "KU_RESULT: %ld", ret);
		return -1;
	}
	return 0;
}

#define FAIL(...) do { snprintf(reason, sizeof(reason), __VA_ARGS__); return 1; } while (0)
#define SKIP(...) do { snprintf(reason, sizeof(reason), __VA_ARGS__); return 2; } while (0)
#define CHECK(cond, ...) do { if (!(cond)) FAIL(__VA_ARGS__); } while (0)

/*
 * From v14 on (x86-compat-defer) a compat task gets no deferred trace:
 * every one of the n requests of r must have returned -EINVAL with a zero
 * request id, and no tracer's callback may have run (the host checks that
 * no deferred snapshot of the task was printed either).
 */
static int refused(struct ku_result *r, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		CHECK(r->ret[i] == -EINVAL, "request %d of a compat task = %lld, want -EINVAL (the revision refuses compat tasks)", i + 1, r->ret[i]);
		CHECK(r->ts_req[i] == 0, "refused request %d got %s %llu, want 0", i + 1, ID_NAME, r->ts_req[i]);
	}
	for (i = 0; i < KU_SLOTS; i++)
		CHECK(r->calls[i] == 0, "tracer %c got %llu callbacks for a compat task, want none", "ABCD"[i], r->calls[i]);
	out("    # refused: %d request(s) returned -EINVAL, no callback\n", n);
	return 0;
}

/* Checks a request id: a cookie has cpu + 1 in its low 32 bits and an odd count in its high 32 bits. */
static int check_id(unsigned long long id)
{
	CHECK(id != 0, "%s is zero", ID_NAME);
	if (KU_COOKIE) {
		CHECK((unsigned int)id != 0, "cookie %#llx has no cpu (low 32 bits zero)", id);
		CHECK((id >> 32) & 1, "cookie %#llx has an even count (bit 32 clear)", id);
	}
	return 0;
}

static void expect(struct ku_result *r, const char *chain, int exact)
{
	out("    # expect: id=%llu bin=%s exact=%d chain=%s\n", r->id, MODE, exact, chain);
}

static int depth_case(int d, const char *fn)
{
	struct ku_result r;
	char chain[128];
	long ret;

	ret = rec(d, KU_REQ, KU_F_A);
	CHECK(ret == 0, "KU_REQ: %ld", ret);
	if (result(&r))
		return 1;
	if (REFUSED)
		return refused(&r, 1);
	CHECK(r.ret[0] == 0, "unwind_deferred_request = %lld, want 0", r.ret[0]);
	if (check_id(r.ts_req[0]))
		return 1;
	CHECK(r.calls[0] == 1, "callback called %llu times, want 1", r.calls[0]);
	snprintf(chain, sizeof(chain), "ku_syscall,rec*%d,depth_case,%s,main", d, fn);
	expect(&r, chain, 0);
	if (d + 3 > KU_MAX_ENTRIES)
		CHECK(r.nr[0] == KU_MAX_ENTRIES, "trace has %llu entries, want %d (truncated)", r.nr[0], KU_MAX_ENTRIES);
	else
		CHECK(r.nr[0] >= (unsigned long long)d + 3 && r.nr[0] < KU_MAX_ENTRIES,
		      "trace has %llu entries, want %d to %d", r.nr[0], d + 3, KU_MAX_ENTRIES - 1);
	return 0;
}

NOINLINE int case_depth_1(void) { return depth_case(1, "case_depth_1"); }
NOINLINE int case_depth_8(void) { return depth_case(8, "case_depth_8"); }
NOINLINE int case_depth_64(void) { return depth_case(64, "case_depth_64"); }
NOINLINE int case_depth_600(void) { return depth_case(600, "case_depth_600"); }

NOINLINE int case_two_tracers(void)
{
	struct ku_result r;
	long ret = rec(3, KU_REQ, KU_F_A | KU_F_B);

	CHECK(ret == 0, "KU_REQ: %ld", ret);
	if (result(&r))
		return 1;
	if (REFUSED)
		return refused(&r, 2);
	CHECK(r.ret[0] == 0 && r.ret[1] == 0, "requests returned %lld, %lld; want 0, 0", r.ret[0], r.ret[1]);
	if (check_id(r.ts_req[0]))
		return 1;
	CHECK(r.ts_req[0] == r.ts_req[1], "%ss %llu, %llu differ", ID_NAME, r.ts_req[0], r.ts_req[1]);
	CHECK(r.calls[0] == 1 && r.calls[1] == 1, "callbacks A=%llu B=%llu, want 1 each", r.calls[0], r.calls[1]);
	CHECK(r.ts_cb[0] == r.ts_req[0] && r.ts_cb[1] == r.ts_req[0],
	      "callback %ss %llu, %llu, request's %llu", ID_NAME, r.ts_cb[0], r.ts_cb[1], r.ts_req[0]);
	CHECK(r.entries[0] == r.entries[1] && r.nr[0] == r.nr[1], "the two callbacks got different traces (two unwinds)");
	expect(&r, "ku_syscall,rec*3,case_two_tracers,main", 0);
	return 0;
}

NOINLINE int case_same_tracer_twice(void)
{
	struct ku_result r;
	long ret = rec(2, KU_REQ, KU_F_A | KU_F_A_TWICE);

	CHECK(ret == 0, "KU_REQ: %ld", ret);
	if (result(&r))
		return 1;
	if (REFUSED)
		return refused(&r, 2);
	CHECK(r.ret[0] == 0, "first request = %lld, want 0", r.ret[0]);
	CHECK(r.ret[1] == UNWIND_ALREADY_PENDING, "second request = %lld, want %d (already pending)", r.ret[1], UNWIND_ALREADY_PENDING);
	CHECK(r.ts_req[0] == r.ts_req[1], "%ss %llu, %llu differ", ID_NAME, r.ts_req[0], r.ts_req[1]);
	CHECK(r.calls[0] == 1, "callback called %llu times, want 1", r.calls[0]);
	expect(&r, "ku_syscall,rec*2,case_same_tracer_twice,main", 0);
	return 0;
}

NOINLINE int case_request_in_callback(void)
{
	struct ku_result r;
	long ret = rec(2, KU_REQ, KU_F_A | KU_F_AGAIN);

	/* Getting here at all shows there was no livelock. */
	CHECK(ret == 0, "KU_REQ: %ld", ret);
	if (result(&r))
		return 1;
	if (REFUSED)
		return refused(&r, 1);
	CHECK(r.ret[0] == 0, "request = %lld, want 0", r.ret[0]);
	CHECK(r.again_ret == UNWIND_ALREADY_EXECUTED, "request in callback = %lld, want %d (already executed)", r.again_ret, UNWIND_ALREADY_EXECUTED);
	CHECK(r.calls[0] == 1, "callback called %llu times, want 1", r.calls[0]);
	expect(&r, "ku_syscall,rec*2,case_request_in_callback,main", 0);
	return 0;
}

NOINLINE int case_consecutive_syscalls(void)
{
	struct ku_result r;
	char chain[128];

	/* Two requests in back-to-back system calls, nothing in between. */
	CHECK(rec(1, KU_REQ, KU_F_A) == 0, "first KU_REQ failed");
	CHECK(rec(2, KU_REQ, KU_F_A) == 0, "second KU_REQ failed");
	if (result(&r))
		return 1;
	CHECK(r.prev_id + 1 == r.id, "requests %llu and %llu are not consecutive", r.prev_id, r.id);
	if (REFUSED) {
		CHECK(r.prev_ts_req == 0 && r.prev_calls == 0, "the first refused request got %s %llu and %llu callbacks", ID_NAME, r.prev_ts_req, r.prev_calls);
		return refused(&r, 1);
	}
	CHECK(r.ret[0] == 0, "second request returned %lld", r.ret[0]);
	CHECK(r.prev_calls == 1 && r.calls[0] == 1, "callbacks %llu, %llu, want 1 each", r.prev_calls, r.calls[0]);
	if (check_id(r.prev_ts_req) || check_id(r.ts_req[0]))
		return 1;
	CHECK(r.prev_ts_req != r.ts_req[0], "both system calls got %s %llu", ID_NAME, r.ts_req[0]);
	out("    # %ss %#llx then %#llx\n", ID_NAME, r.prev_ts_req, r.ts_req[0]);
	snprintf(chain, sizeof(chain), "ku_syscall,rec,case_consecutive_syscalls,main");
	out("    # expect: id=%llu bin=%s exact=0 chain=%s\n", r.prev_id, MODE, chain);
	expect(&r, "ku_syscall,rec*2,case_consecutive_syscalls,main", 0);
	return 0;
}

/*
 * spin_leaf busy-loops with a frame-pointer frame. It is written in
 * assembly so that the loop's bounds are known symbols: the driver only
 * requests from the timer when the interrupted ip is inside the loop, so
 * the expected chain is exact.
 */
void spin_leaf(void);
extern const char spin_leaf_loop[], spin_leaf_loop_end[];
#ifdef __x86_64__
asm(".text\n.globl spin_leaf\n.type spin_leaf,@function\nspin_leaf:\n"
    "\tpush %rbp\n\tmov %rsp,%rbp\n\tmov $2000000,%ecx\n"
    ".globl spin_leaf_loop\nspin_leaf_loop:\n\tdec %ecx\n\tjnz spin_leaf_loop\n"
    ".globl spin_leaf_loop_end\nspin_leaf_loop_end:\n\tpop %rbp\n\tret\n"
    ".size spin_leaf, .-spin_leaf\n");
#else
asm(".text\n.globl spin_leaf\n.type spin_leaf,@function\nspin_leaf:\n"
    "\tpush %ebp\n\tmov %esp,%ebp\n\tmov $2000000,%ecx\n"
    ".globl spin_leaf_loop\nspin_leaf_loop:\n\tdec %ecx\n\tjnz spin_leaf_loop\n"
    ".globl spin_leaf_loop_end\nspin_leaf_loop_end:\n\tpop %ebp\n\tret\n"
    ".size spin_leaf, .-spin_leaf\n");
#endif

NOINLINE void spin_mid(int n)
{
	if (n > 1)
		spin_mid(n - 1);
	else
		spin_leaf();
}

static int timer_case(unsigned long mode, const char *fn, struct ku_result *r)
{
	struct ku_timer_arg arg = {
		.mode = mode,
		.lo = (unsigned long)spin_leaf_loop,
		.hi = (unsigned long)spin_leaf_loop_end,
	};
	char chain[128];
	long ret = ku_syscall(KU_TIMER, (unsigned long)&arg);
	int i;

	CHECK(ret == 0, "KU_TIMER: %ld", ret);
	for (i = 0; i < 3000; i++) {
		spin_mid(3);
		if (result(r))
			return 1;
		if (r->calls[0] || r->ret[0] != -EINPROGRESS)
			break;
	}
	CHECK(r->ret[0] != -EINPROGRESS, "the timer never caught the task in user mode");
	if (REFUSED)
		return refused(r, 1);
	CHECK(r->ret[0] == 0, "request from %s = %lld, want 0", mode == KU_T_NMI ? "NMI" : "interrupt", r->ret[0]);
	for (i = 0; i < 10 && !r->calls[0]; i++) {
		spin_mid(3);
		if (result(r))
			return 1;
	}
	CHECK(r->calls[0] == 1, "callback called %llu times, want 1", r->calls[0]);
	snprintf(chain, sizeof(chain), "spin_leaf,spin_mid*3,timer_case,%s,main", fn);
	expect(r, chain, 0);
	return 0;
}

NOINLINE int case_timer_irq(void)
{
	struct ku_result r;
	int ret = timer_case(KU_T_IRQ, "case_timer_irq", &r);

	if (ret)
		return ret;
	CHECK(r.in_irq == 1, "request not made in hard interrupt context");
	return 0;
}

NOINLINE int case_nmi(void)
{
	struct ku_result r;
	int ret = timer_case(KU_T_NMI, "case_nmi", &r);

	if (ret)
		return ret;
	CHECK(r.in_nmi == 1, "request not made in NMI context");
	return 0;
}

/*
 * A request from an NMI must not use TWA_RESUME, which is not NMI-safe:
 * from 6.19's "unwind: Fix unwind_deferred_request() vs NMI" on it uses
 * TWA_NMI_CURRENT, which raises an irq_work interrupt from the NMI so that
 * the return to user mode runs the task work. The driver looks at the
 * local APIC's pending irq_work vector before and after the request
 * (KU_NMI_CURRENT: the revision's facts say which mode it uses).
 */
NOINLINE int case_nmi_current(void)
{
	struct ku_result r;
	int ret = timer_case(KU_T_NMI_IRQ_WORK, "case_nmi_current", &r);

	if (ret)
		return ret;
	CHECK(r.in_nmi == 1, "request not made in NMI context");
	if (REFUSED)
		return 0;	/* refused before any task work was queued */
	CHECK(r.irq_work_before == 0, "an irq_work interrupt was pending before the request");
	if (KU_NMI_CURRENT)
		CHECK(r.irq_work_after == 1, "the request from NMI raised no irq_work interrupt: task_work_add() without TWA_NMI_CURRENT");
	else
		CHECK(r.irq_work_after == 0, "the request from NMI raised an irq_work interrupt, but the revision requests with TWA_RESUME");
	out("    # the request from NMI raised %s irq_work interrupt (%s)\n", r.irq_work_after ? "an" : "no",
	    KU_NMI_CURRENT ? "TWA_NMI_CURRENT" : "TWA_RESUME");
	return 0;
}

/*
 * entry_leaf is stopped at its first instruction, push %bp, by a uprobe
 * whose handler unwinds (tracer F): the frame is not made yet, the return
 * address into entry_mid is at the stack pointer and the frame pointer is
 * still entry_mid's. From 6.19's "Teach FP unwind about start of function"
 * on (KU_FUNC_START) the kernel takes the return address there and the
 * trace holds entry_mid; before, it walks entry_mid's frame pointer and
 * misses entry_mid.
 */
void entry_leaf(void);
#ifdef __x86_64__
asm(".text\n.globl entry_leaf\n.type entry_leaf,@function\nentry_leaf:\n"
    "\tpush %rbp\n\tmov %rsp,%rbp\n\tnop\n\tpop %rbp\n\tret\n"
    ".size entry_leaf, .-entry_leaf\n");
#else
asm(".text\n.globl entry_leaf\n.type entry_leaf,@function\nentry_leaf:\n"
    "\tpush %ebp\n\tmov %esp,%ebp\n\tnop\n\tpop %ebp\n\tret\n"
    ".size entry_leaf, .-entry_leaf\n");
#endif

NOINLINE void entry_mid(void)
{
	entry_leaf();
}

NOINLINE int case_func_start(void)
{
	struct ku_result r;
	long ret = ku_syscall(KU_UPROBE, (unsigned long)entry_leaf);

	CHECK(ret == 0, "KU_UPROBE: %ld", ret);
	entry_mid();
	ret = ku_syscall(KU_UPROBE_OFF, 0);
	CHECK(ret == 0, "KU_UPROBE_OFF: %ld", ret);
	if (result(&r))
		return 1;
	CHECK(r.uprobe_hits == 1, "the uprobe at entry_leaf hit %lld times, want 1", r.uprobe_hits);
	CHECK((r.uprobe_insn & 0xff) == 0x55, "the probed instruction is %#llx, not push %%bp", r.uprobe_insn & 0xff);
	CHECK(r.ret[0] == 0, "unwind_user_faultable in the uprobe handler = %lld", r.ret[0]);
#ifndef __x86_64__
	if (!KU_COMPAT_UNWIND) {
		out("    # no compat unwinder: a trace of %llu entries compared with the walker only\n", r.nr[0]);
		return 0;
	}
#endif
	if (KU_FUNC_START)
		expect(&r, "entry_leaf,entry_mid,case_func_start,main", 0);
	else
		expect(&r, "entry_leaf,case_func_start,main", 0);
	out("    # at entry_leaf's first instruction the trace %s entry_mid (%s)\n", KU_FUNC_START ? "holds" : "misses",
	    KU_FUNC_START ? "return address at the stack pointer" : "the caller's frame pointer walked");
	return 0;
}

NOINLINE int case_cancel_pending(void)
{
	struct ku_result r;
	long ret = rec(2, KU_REQ, KU_F_CANCEL);

	CHECK(ret == 0, "KU_REQ: %ld", ret);
	if (result(&r))
		return 1;
	CHECK(r.ret[0] == 0, "registering C = %lld", r.ret[0]);
	CHECK(r.ret[1] == (REFUSED ? -EINVAL : 0), "request with C = %lld, want %d", r.ret[1], REFUSED ? -EINVAL : 0);
	CHECK(r.ret[2] == 0, "registering D after cancelling C = %lld", r.ret[2]);
	CHECK(r.ret[3] == (REFUSED ? -EINVAL : 0), "request with D = %lld, want %d", r.ret[3], REFUSED ? -EINVAL : 0);
	CHECK(r.bit_c == r.bit_d, "D got bit %lld, not C's freed bit %lld", r.bit_d, r.bit_c);
	if (REFUSED) {
		CHECK(r.calls[2] == 0 && r.calls[3] == 0, "tracers C and D got %llu and %llu callbacks for a compat task", r.calls[2], r.calls[3]);
		out("    # refused: the requests of C and D returned -EINVAL, no callback\n");
		return 0;
	}
	CHECK(r.calls[2] == 0, "cancelled tracer C got %llu callbacks", r.calls[2]);
	CHECK(r.bit_c == r.bit_d, "D got bit %lld, not C's freed bit %lld", r.bit_d, r.bit_c);
	CHECK(r.calls[3] == 1, "D got %llu callbacks, want 1", r.calls[3]);
	expect(&r, "ku_syscall,rec*2,case_cancel_pending,main", 0);
	return 0;
}

NOINLINE int case_ebusy(void)
{
	struct ku_result r;
	long ret = ku_syscall(KU_EBUSY, 0);

	CHECK(ret == 0, "KU_EBUSY: %ld", ret);
	if (result(&r))
		return 1;
	out("    # registered %lld tracers before -EBUSY; the revision leaves %lld bits free (%d reserved, %d held by the kernel's own tracers)\n",
	    r.count, r.expected, KU_RESERVED_BITS, KU_OTHER_TRACERS);
	CHECK(r.count == r.expected, "registered %lld tracers, want %lld", r.count, r.expected);
	CHECK(r.ret[0] == -EBUSY, "next unwind_deferred_init = %lld, want -EBUSY", r.ret[0]);
	return 0;
}

NOINLINE int case_exit_pending(void)
{
	struct ku_result r;
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		rec(5, KU_REQ, KU_F_A | KU_F_EXIT);
		_exit(3); /* not reached: the driver calls do_exit(0) */
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x, want exit 0 from do_exit", status);
	if (result(&r))
		return 1;
	if (REFUSED)
		return refused(&r, 1);
	CHECK(r.ret[0] == 0, "request = %lld, want 0", r.ret[0]);
	CHECK(r.calls[0] == 1, "callback called %llu times for the exiting task, want 1", r.calls[0]);
	CHECK(r.nr[0] >= 8, "exiting task's trace has %llu entries, want at least 8", r.nr[0]);
	expect(&r, "ku_syscall,rec*5,case_exit_pending,main", 0);
	return 0;
}

#define BROKEN_UNMAPPED	1
#define BROKEN_DOWN	2

/*
 * Overwrites its caller's saved frame pointer (the word its own frame
 * pointer points at) for the duration of one request: with an unmapped
 * address, or with an address below its own frame, where the stack grows
 * down to. The kernel must stop there: its trace is ku_syscall, broken_fn,
 * broken_case and nothing more.
 */
NOINLINE long broken_fn(int how)
{
	volatile unsigned long *fp = __builtin_frame_address(0);
	unsigned long saved = fp[0];
	long r;

	fp[0] = how == BROKEN_UNMAPPED ? 0x1000UL : (unsigned long)fp - 64;
	r = ku_syscall(KU_REQ, KU_F_A);
	fp[0] = saved;
	return r;
}

NOINLINE int broken_case(int how)
{
	struct ku_result r;
	long ret = broken_fn(how);

	CHECK(ret == 0, "KU_REQ: %ld", ret);
	if (result(&r))
		return 1;
	if (REFUSED)
		return refused(&r, 1);
	CHECK(r.calls[0] == 1, "callback called %llu times, want 1", r.calls[0]);
	expect(&r, "ku_syscall,broken_fn,broken_case", 1);
	CHECK(r.nr[0] == 3, "trace has %llu entries, want 3 (stop at the broken link)", r.nr[0]);
	return 0;
}

NOINLINE int case_broken_fp_unmapped(void)
{
	return broken_case(BROKEN_UNMAPPED);
}

NOINLINE int case_broken_fp_down(void)
{
	return broken_case(BROKEN_DOWN);
}

NOINLINE int case_kthread_einval(void)
{
	struct ku_result r;
	long ret = ku_syscall(KU_KTHREAD, 0);

	CHECK(ret == 0, "KU_KTHREAD: %ld", ret);
	if (result(&r))
		return 1;
	CHECK(r.ret[0] == -EINVAL, "unwind_deferred_request from a kthread = %lld, want -EINVAL", r.ret[0]);
	CHECK(r.ret[1] == -EINVAL, "unwind_user_faultable from a kthread = %lld, want -EINVAL", r.ret[1]);
	return 0;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

NOINLINE int case_bench(void)
{
	struct ku_result a, b;
	long long t0, nop, req;
	const int loops = 200, calls = 2000;
	int i;

#ifndef __x86_64__
	if (!KU_COMPAT_UNWIND)
		SKIP("the revision does not unwind compat tasks (no HAVE_UNWIND_USER_COMPAT_FP)");
#endif
	CHECK(rec(8, KU_BENCH, loops) == 0, "KU_BENCH failed");
	if (result(&a))
		return 1;
	CHECK(rec(600, KU_BENCH, loops) == 0, "KU_BENCH failed");
	if (result(&b))
		return 1;
	CHECK(b.frames > a.frames, "no deeper trace at depth 600 (%llu <= %llu frames)", b.frames, a.frames);
	t0 = now_ns();
	for (i = 0; i < calls; i++)
		ku_syscall(KU_NOP, 0);
	nop = (now_ns() - t0) / calls;
	t0 = now_ns();
	for (i = 0; i < calls; i++)
		ku_syscall(KU_REQ, KU_F_A | KU_F_QUIET);
	req = (now_ns() - t0) / calls;
	out("    # bench: mode=%s unwind_ns_per_frame=%lld unwind_ns_%llu_frames=%lld unwind_ns_%llu_frames=%lld syscall_ns=%lld syscall_with_request_ns=%lld\n",
	    MODE, (long long)((b.ns - a.ns) / loops / (b.frames - a.frames)),
	    a.frames, (long long)(a.ns / loops), b.frames, (long long)(b.ns / loops), nop, req);
	return 0;
}

/*
 * A tracer calling unwind_user_faultable() directly, from two system calls
 * at different depths: each call must unwind the stack of its own entry,
 * not return a trace cached by an earlier entry. An extra case: it only
 * runs with KPATCH_EXTRA in the environment (kpatch test --extra), since on
 * v11 it fails, because unwind_reset_info() only clears the cache when a
 * deferred request set unwind_mask (v12 fixes it with the UNWIND_USED bit).
 */
NOINLINE int case_faultable_sync(void)
{
	struct ku_result r1, r2;


	CHECK(rec(3, KU_FAULTABLE, 0) == 0, "KU_FAULTABLE failed");
	if (result(&r1))
		return 1;
	CHECK(r1.ret[0] == 0, "unwind_user_faultable = %lld", r1.ret[0]);
#ifndef __x86_64__
	if (!KU_COMPAT_UNWIND) {
		/*
		 * No compat unwinder: the kernel walks the 32-bit stack with
		 * 64-bit frames. The host compares each trace with the Go
		 * walker's of the same model; the call chain cannot match.
		 */
		CHECK(rec(7, KU_FAULTABLE, 0) == 0, "KU_FAULTABLE failed");
		if (result(&r2))
			return 1;
		CHECK(r2.ret[0] == 0, "unwind_user_faultable = %lld", r2.ret[0]);
		out("    # no compat unwinder: traces of %llu and %llu entries compared with the walker only\n", r1.nr[0], r2.nr[0]);
		return 0;
	}
#endif
	expect(&r1, "ku_syscall,rec*3,case_faultable_sync,main", 0);
	CHECK(rec(7, KU_FAULTABLE, 0) == 0, "KU_FAULTABLE failed");
	if (result(&r2))
		return 1;
	CHECK(r2.ret[0] == 0, "unwind_user_faultable = %lld", r2.ret[0]);
	expect(&r2, "ku_syscall,rec*7,case_faultable_sync,main", 0);
	CHECK(r2.nr[0] == r1.nr[0] + 4, "traces at depths 3 and 7 have %llu and %llu entries (a stale cached trace?)",
	      r1.nr[0], r2.nr[0]);
	return 0;
}

struct tcase {
	const char *name;
	int (*fn)(void);
	const char *extra;	/* an extra case: what it does, run only when selected */
};

/*
 * The host (package boottest) checks that it sees every one of these. An
 * extra case runs when KPATCH_EXTRA names it (the revision's facts list
 * it: extra-cases) or is 1 (kpatch test --extra).
 */
static const struct tcase cases[] = {
	{ "depth_1", case_depth_1 },
	{ "depth_8", case_depth_8 },
	{ "depth_64", case_depth_64 },
	{ "depth_600", case_depth_600 },
	{ "two_tracers", case_two_tracers },
	{ "same_tracer_twice", case_same_tracer_twice },
	{ "request_in_callback", case_request_in_callback },
	{ "consecutive_syscalls", case_consecutive_syscalls },
	{ "timer_irq", case_timer_irq },
	{ "nmi", case_nmi },
	{ "cancel_pending", case_cancel_pending },
	{ "ebusy", case_ebusy },
	{ "exit_pending", case_exit_pending },
	{ "broken_fp_unmapped", case_broken_fp_unmapped },
	{ "broken_fp_down", case_broken_fp_down },
	{ "kthread_einval", case_kthread_einval },
	{ "faultable_sync", case_faultable_sync, "direct unwind_user_faultable() calls in two entries" },
	{ "bench", case_bench },
	{ "nmi_current", case_nmi_current, "a request from NMI and the irq_work it raises" },
	{ "func_start", case_func_start, "a uprobe at a function's first instruction unwinds" },
};

/* Whether the comma-separated list env names name (or is 1: all). */
static int listed(const char *env, const char *name)
{
	const char *l = getenv(env), *p;
	size_t n = strlen(name);

	if (!l)
		return 0;
	if (!strcmp(l, "1"))
		return 1;
	for (p = l; *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p))
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

/*
 * Whether KPATCH_FILTER (kpatch test --filter: comma-separated globs, as
 * kunit.py's --filter_glob) selects the case: a glob with a dot matches
 * MODE.CASE, one without matches CASE.
 */
static int selected(const char *name)
{
	const char *l = getenv("KPATCH_FILTER");
	char glob[128], full[128];
	const char *p, *e;

	if (!l || !*l)
		return 1;
	snprintf(full, sizeof(full), "%s.%s", MODE, name);
	for (p = l; *p; p = *e ? e + 1 : e) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		snprintf(glob, sizeof(glob), "%.*s", (int)(e - p), p);
		if (!fnmatch(glob, strchr(glob, '.') ? full : name, 0))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = sizeof(cases) / sizeof(cases[0]), i, failed = 0;
	const char *only = argc > 1 ? argv[1] : NULL;

	fd = open(KU_PROC, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", KU_PROC, strerror(errno));
		return 2;
	}
	out("    KTAP version 1\n    # Subtest: unwind_%s\n    1..%d\n", MODE, n);
	for (i = 0; i < n; i++) {
		int r;

		if ((only && strcmp(only, cases[i].name)) || !selected(cases[i].name)) {
			out("    ok %d %s # SKIP not selected\n", i + 1, cases[i].name);
			continue;
		}
		if (cases[i].extra && !listed("KPATCH_EXTRA", cases[i].name)) {
			out("    ok %d %s # SKIP extra case (kpatch test --extra): %s\n", i + 1, cases[i].name, cases[i].extra);
			continue;
		}
		reason[0] = 0;
		out("    # case: %s\n", cases[i].name);
		r = cases[i].fn();
		if (r == 0) {
			out("    ok %d %s\n", i + 1, cases[i].name);
		} else if (r == 2) {
			out("    ok %d %s # SKIP %s\n", i + 1, cases[i].name, reason);
		} else {
			out("    # %s: %s\n    not ok %d %s\n", cases[i].name, reason, i + 1, cases[i].name);
			failed++;
		}
	}
	return failed ? 1 : 0;
}
