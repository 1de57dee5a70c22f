/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface between kpatch's deferred-unwind test driver (kernel) and its
 * test programs (user space, 64-bit and 32-bit). Not part of any series.
 *
 * Every field of struct ku_result is 64 bits wide so that the layout is
 * the same for 64-bit and compat (i386) callers.
 */
#ifndef KPATCH_UNWIND_H
#define KPATCH_UNWIND_H

#define KU_PROC "/proc/kpatch_unwind"

/* ioctl commands; the argument is described next to each. */
#define KU_NOP		0x6b750001 /* nothing: baseline system call */
#define KU_REQ		0x6b750002 /* arg: KU_F_* flags; requests in this entry */
#define KU_RESULT	0x6b750003 /* arg: struct ku_result *; results of the last KU_REQ/KU_TIMER */
#define KU_EBUSY	0x6b750004 /* register tracers until -EBUSY; see count/expected */
#define KU_KTHREAD	0x6b750005 /* request from a kernel thread; ret[0], ret[1] */
#define KU_TIMER	0x6b750006 /* arg: struct ku_timer_arg *; arm a timer that requests in user mode */
#define KU_BENCH	0x6b750007 /* arg: loops; time unwind_user() of the current stack */
#define KU_FAULTABLE	0x6b750008 /* unwind_user_faultable() in this system call; ret[0], nr[0] */
#define KU_UPROBE	0x6b750009 /* arg: address of a function's first instruction: a uprobe there unwinds (tracer F) */
#define KU_UPROBE_OFF	0x6b75000a /* remove KU_UPROBE's uprobe */

#define KU_F_A		0x01 /* request with tracer A */
#define KU_F_B		0x02 /* request with tracer B */
#define KU_F_A_TWICE	0x04 /* request with A a second time */
#define KU_F_AGAIN	0x08 /* A's callback requests with A again */
#define KU_F_CANCEL	0x10 /* register C, request, cancel C, register D on the same bit, request D */
#define KU_F_EXIT	0x20 /* after the requests, do_exit(0) with them pending */
#define KU_F_QUIET	0x40 /* do not print snapshots (benchmarks) */

#define KU_T_IRQ	1 /* request from the timer interrupt */
#define KU_T_NMI	2 /* request from an NMI sent by the timer interrupt */
#define KU_T_NMI_IRQ_WORK 3 /* KU_T_NMI, and see whether the request raised an irq_work interrupt */

#define KU_SLOTS	4 /* tracer slots: 0 = A, 1 = B, 2 = C, 3 = D */

/* KU_TIMER: request (mode KU_T_*) once the task runs in user mode at an ip in [lo, hi). */
struct ku_timer_arg {
	unsigned long long mode;
	unsigned long long lo, hi;
};

struct ku_result {
	unsigned long long id;			/* request id (snapshot id=) */
	long long ret[KU_SLOTS];		/* return values of the requests, in call order */
	unsigned long long ts_req[KU_SLOTS];	/* timestamps returned by those requests */
	unsigned long long calls[KU_SLOTS];	/* callbacks per tracer slot */
	unsigned long long ts_cb[KU_SLOTS];	/* timestamp passed to each slot's callback */
	unsigned long long nr[KU_SLOTS];	/* trace length each slot's callback saw */
	unsigned long long entries[KU_SLOTS];	/* trace->entries pointer (same unwind?) */
	long long again_ret;			/* request made inside A's callback */
	long long bit_c, bit_d;			/* bits of C (cancelled) and D */
	long long count, expected;		/* KU_EBUSY: registered, free bits */
	long long in_nmi, in_irq;		/* KU_TIMER: context of the request */
	unsigned long long ns;			/* KU_BENCH: total ns */
	unsigned long long frames;		/* KU_BENCH: frames per unwind */
	unsigned long long prev_id;		/* the KU_REQ before this one ... */
	unsigned long long prev_ts_req;		/* ... and its first timestamp */
	unsigned long long prev_calls;		/* ... and its callbacks with A */
	long long irq_work_before;		/* KU_T_NMI_IRQ_WORK: irq_work vector pending before the request ... */
	long long irq_work_after;		/* ... and after it (TWA_NMI_CURRENT raises one) */
	long long uprobe_hits;			/* KU_UPROBE: handler runs in this task */
	unsigned long long uprobe_insn;		/* KU_UPROBE: first bytes of the probed instruction */
};

#endif
