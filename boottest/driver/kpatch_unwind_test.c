// SPDX-License-Identifier: GPL-2.0
/*
 * kpatch deferred-unwind test driver. Never part of a mailed series: kpatch
 * copies it into its test build only.
 *
 * It is a tracer of the deferred user-space unwinding API
 * (unwind_deferred_init/request/cancel, unwind_user_faultable) that the test
 * programs drive through ioctl() on /proc/kpatch_unwind. Lines written to
 * that file are printed on the console, so that the programs' KTAP output
 * and the driver's records come out in one ordered stream.
 *
 * For every trace delivered to a callback it prints a snapshot in the text
 * form of kpatch's unwind package: the user registers of the task (which
 * cannot change while it is in the kernel, so they are those of the
 * request), the segment bases, the bytes of the user stack from sp to the
 * end of its VMA (at most KU_STACK_MAX), and the kernel's trace.
 */
#define pr_fmt(fmt) fmt

#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/proc_fs.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/mm.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/compat.h>
#include <linux/hardirq.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_user.h>
#include <linux/uprobes.h>
#include <linux/mman.h>
#include <linux/fs.h>
#include <asm/ptrace.h>
#include <asm/insn.h>
#include <asm/insn-eval.h>
#include <asm/irq_regs.h>
#include <asm/nmi.h>
#include <asm/apic.h>
#include <asm/irq_vectors.h>
#include <asm/apic.h>
#include <asm/apicdef.h>

#include "kpatch_unwind.h"
#include "kpatch_unwind_facts.h"

#define KU_STACK_MAX	(64 * 1024)
#define KU_CHUNK	64

static struct unwind_work tracers[KU_SLOTS];
static bool registered[KU_SLOTS];
static struct unwind_work ebusy_works[BITS_PER_LONG];
static struct ku_result res;
static u64 next_id;
static unsigned long cur_flags;
static u8 *stackbuf;
/* Tracer names in snapshots; F is a synchronous unwind_user_faultable(). */
static const char slot_name[KU_SLOTS + 1] = { 'A', 'B', 'C', 'D', 'F' };
#define KU_SLOT_FAULTABLE KU_SLOTS

/*
 * Set while the uprobe handler unwinds: the snapshot then says so with
 * the probed instruction's first four bytes (uprobe=55488989), which the
 * kernel's unwind_user_at_function_start() of 6.19 looks at.
 */
static const u8 *ku_uprobe_insn;

static void ku_print_snapshot(int slot, struct unwind_stacktrace *trace, u64 ts)
{
	struct pt_regs *regs = task_pt_regs(current);
	bool compat = !user_64bit_mode(regs);
	unsigned long cs_base = 0, ss_base = 0, sp, end = 0, n = 0;
	struct vm_area_struct *vma;
	char line[16 + 8 * 20];
	unsigned int i;
	int len;

	if (compat) {
		/*
		 * The bases as x86's instruction decoder finds them, not with a
		 * helper of the series (v11 had segment_base_address(), v12 has
		 * none); -1 means an invalid segment.
		 */
		cs_base = insn_get_seg_base(regs, INAT_SEG_REG_CS);
		ss_base = insn_get_seg_base(regs, INAT_SEG_REG_SS);
		if (cs_base == -1UL)
			cs_base = 0;
		if (ss_base == -1UL)
			ss_base = 0;
		sp = (regs->sp & 0xffffffffUL) + ss_base;
	} else {
		sp = regs->sp;
	}

	if (current->mm) {
		mmap_read_lock(current->mm);
		vma = find_vma(current->mm, sp);
		if (vma && vma->vm_start <= sp)
			end = vma->vm_end;
		mmap_read_unlock(current->mm);
	}
	if (end > sp + KU_STACK_MAX)
		end = sp + KU_STACK_MAX;
	while (sp + n < end) {
		unsigned long want = min_t(unsigned long, KU_CHUNK, end - sp - n);
		unsigned long left = copy_from_user(stackbuf + n, (void __user *)(sp + n), want);

		n += want - left;
		if (left)
			break;
	}

	if (ku_uprobe_insn)
		pr_info("snapshot: v=1 mode=%s ip=0x%lx sp=0x%lx bp=0x%lx cs_base=0x%lx ss_base=0x%lx id=%llu tracer=%c ts=%llu pid=%d uprobe=%4phN\n",
			compat ? "compat" : "64", regs->ip, regs->sp, regs->bp, cs_base, ss_base,
			res.id, slot_name[slot], ts, task_pid_nr(current), ku_uprobe_insn);
	else
		pr_info("snapshot: v=1 mode=%s ip=0x%lx sp=0x%lx bp=0x%lx cs_base=0x%lx ss_base=0x%lx id=%llu tracer=%c ts=%llu pid=%d\n",
			compat ? "compat" : "64", regs->ip, regs->sp, regs->bp, cs_base, ss_base,
			res.id, slot_name[slot], ts, task_pid_nr(current));
	for (i = 0; i < n; i += KU_CHUNK)
		pr_info("stack: 0x%lx %*phN\n", sp + i, (int)min_t(unsigned long, KU_CHUNK, n - i), stackbuf + i);
	for (i = 0; i < trace->nr; i += 8) {
		unsigned int j;

		len = scnprintf(line, sizeof(line), "kernel:");
		for (j = i; j < trace->nr && j < i + 8; j++)
			len += scnprintf(line + len, sizeof(line) - len, " 0x%lx", trace->entries[j]);
		pr_info("%s\n", line);
	}
	if (!trace->nr)
		pr_info("kernel:\n");
	pr_info("end: stack=%lu kernel=%u\n", n, trace->nr);
}

static void ku_callback(struct unwind_work *work, struct unwind_stacktrace *trace, u64 ts)
{
	int slot = work - tracers;
	u64 t;

	if (slot < 0 || slot >= KU_SLOTS)
		return;
	res.calls[slot]++;
	res.ts_cb[slot] = ts;
	res.nr[slot] = trace->nr;
	res.entries[slot] = (unsigned long)trace->entries;
	if (slot == 0 && (cur_flags & KU_F_AGAIN))
		res.again_ret = unwind_deferred_request(work, &t);
	if (!(cur_flags & KU_F_QUIET))
		ku_print_snapshot(slot, trace, ts);
}

static void ku_dummy_callback(struct unwind_work *work, struct unwind_stacktrace *trace, u64 ts)
{
}

static void ku_request(int slot, int *i)
{
	u64 ts = 0;

	if (*i >= KU_SLOTS)
		return;
	res.ret[*i] = unwind_deferred_request(&tracers[slot], &ts);
	res.ts_req[*i] = ts;
	(*i)++;
}

static long ku_req(unsigned long flags)
{
	u64 prev_id = res.id, prev_ts = res.ts_req[0], prev_calls = res.calls[0];
	int i = 0;

	memset(&res, 0, sizeof(res));
	res.id = ++next_id;
	res.prev_id = prev_id;
	res.prev_ts_req = prev_ts;
	res.prev_calls = prev_calls;
	cur_flags = flags;
	if (flags & KU_F_A)
		ku_request(0, &i);
	if (flags & KU_F_A_TWICE)
		ku_request(0, &i);
	if (flags & KU_F_B)
		ku_request(1, &i);
	if (flags & KU_F_CANCEL) {
		res.ret[i] = unwind_deferred_init(&tracers[2], ku_callback);
		if (res.ret[i++])
			return 0;
		res.bit_c = tracers[2].bit;
		ku_request(2, &i);
		unwind_deferred_cancel(&tracers[2]);
		res.ret[i] = unwind_deferred_init(&tracers[3], ku_callback);
		if (res.ret[i++])
			return 0;
		registered[3] = true;
		res.bit_d = tracers[3].bit;
		ku_request(3, &i);
	}
	if (flags & KU_F_EXIT)
		do_exit(0);
	return 0;
}

static int ku_ebusy(void)
{
	long n = 0, reserved = KU_RESERVED_BITS, others = 0;
	int s;

	for (s = 0; s < KU_SLOTS; s++)
		others += registered[s];
	while (n < BITS_PER_LONG && !unwind_deferred_init(&ebusy_works[n], ku_dummy_callback))
		n++;
	res.count = n;
	res.expected = BITS_PER_LONG - reserved - others - KU_OTHER_TRACERS;
	/* One more must fail with -EBUSY, not succeed or fail otherwise. */
	res.ret[0] = n < BITS_PER_LONG ? unwind_deferred_init(&ebusy_works[n], ku_dummy_callback) : 0;
	while (n > 0)
		unwind_deferred_cancel(&ebusy_works[--n]);
	return 0;
}

static DECLARE_COMPLETION(ku_kthread_done);

static int ku_kthread_fn(void *data)
{
	struct unwind_stacktrace trace;
	u64 ts;

	res.ret[0] = unwind_deferred_request(&tracers[0], &ts);
	res.ret[1] = unwind_user_faultable(&trace);
	complete(&ku_kthread_done);
	return 0;
}

static struct hrtimer ku_timer;
static struct task_struct *ku_target;
static int ku_tmode, ku_tries, ku_nmi_armed;
static unsigned long ku_lo, ku_hi;

/*
 * Whether the irq_work vector is pending in this CPU's local APIC (its
 * IRR): task_work_add(TWA_NMI_CURRENT) raises it, from the NMI, so that
 * the return to user mode runs the task work; TWA_RESUME does not.
 */
static long long ku_irq_work_pending(void)
{
	u32 irr = apic_read(APIC_IRR + (IRQ_WORK_VECTOR / 32) * 0x10);

	return !!(irr & BIT(IRQ_WORK_VECTOR % 32));
}

static int ku_nmi(unsigned int type, struct pt_regs *regs)
{
	u64 ts;

	if (!READ_ONCE(ku_nmi_armed))
		return NMI_DONE;
	WRITE_ONCE(ku_nmi_armed, 0);
	res.in_nmi = in_nmi() ? 1 : 0;
	if (ku_tmode == KU_T_NMI_IRQ_WORK)
		res.irq_work_before = ku_irq_work_pending();
	res.ret[0] = unwind_deferred_request(&tracers[0], &ts);
	if (ku_tmode == KU_T_NMI_IRQ_WORK)
		res.irq_work_after = ku_irq_work_pending();
	res.ts_req[0] = ts;
	return NMI_HANDLED;
}

static enum hrtimer_restart ku_timer_fn(struct hrtimer *t)
{
	struct pt_regs *regs = get_irq_regs();
	u64 ts;

	if (READ_ONCE(ku_target) == current && regs && user_mode(regs) &&
	    regs->ip >= ku_lo && regs->ip < ku_hi) {
		WRITE_ONCE(ku_target, NULL);
		res.in_irq = in_hardirq() ? 1 : 0;
		if (ku_tmode == KU_T_NMI || ku_tmode == KU_T_NMI_IRQ_WORK) {
			WRITE_ONCE(ku_nmi_armed, 1);
			__apic_send_IPI_self(NMI_VECTOR);
		} else {
			res.ret[0] = unwind_deferred_request(&tracers[0], &ts);
			res.ts_req[0] = ts;
		}
		return HRTIMER_NORESTART;
	}
	if (++ku_tries > 20000) {
		WRITE_ONCE(ku_target, NULL);
		res.ret[0] = -ETIMEDOUT;
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(t, ns_to_ktime(300 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

/*
 * A uprobe at a function's first instruction: its handler runs in the
 * probed task, at that instruction (regs->ip is the probed address), where
 * the frame is not made yet, and unwinds there with
 * unwind_user_faultable() (tracer F). Linux 6.19 takes the return address
 * at the stack pointer for the topmost frame then (ae25884ad749,
 * unwind_user_at_function_start()); earlier revisions walk the caller's
 * frame pointer and so miss the caller.
 */
static struct uprobe *ku_uprobe;
static struct task_struct *ku_uprobe_task;

static int ku_uprobe_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct unwind_stacktrace trace = { 0 };
	struct arch_uprobe *auprobe;

	if (current != READ_ONCE(ku_uprobe_task))
		return 0;
	res.uprobe_hits++;
	auprobe = current->utask ? current->utask->auprobe : NULL;
	if (auprobe)
		memcpy(&res.uprobe_insn, auprobe->insn, 4);
	ku_uprobe_insn = auprobe ? auprobe->insn : (const u8 *)"\0\0\0\0";
	res.ret[0] = unwind_user_faultable(&trace);
	res.nr[0] = trace.nr;
	if (!res.ret[0])
		ku_print_snapshot(KU_SLOT_FAULTABLE, &trace, 0);
	ku_uprobe_insn = NULL;
	return 0;
}

static struct uprobe_consumer ku_uprobe_consumer = {
	.handler = ku_uprobe_handler,
};

static long ku_uprobe_on(unsigned long addr)
{
	struct vm_area_struct *vma;
	struct inode *inode = NULL;
	loff_t off = 0;
	struct uprobe *u;

	if (ku_uprobe)
		return -EBUSY;
	mmap_read_lock(current->mm);
	vma = find_vma(current->mm, addr);
	if (vma && vma->vm_start <= addr && vma->vm_file) {
		inode = igrab(file_inode(vma->vm_file));
		off = ((loff_t)vma->vm_pgoff << PAGE_SHIFT) + (addr - vma->vm_start);
	}
	mmap_read_unlock(current->mm);
	if (!inode)
		return -ENOENT;
	WRITE_ONCE(ku_uprobe_task, current);
	u = uprobe_register(inode, off, 0, &ku_uprobe_consumer);
	iput(inode);
	if (IS_ERR(u)) {
		WRITE_ONCE(ku_uprobe_task, NULL);
		return PTR_ERR(u);
	}
	ku_uprobe = u;
	return 0;
}

static long ku_uprobe_off(void)
{
	if (!ku_uprobe)
		return -ENOENT;
	uprobe_unregister_nosync(ku_uprobe, &ku_uprobe_consumer);
	uprobe_unregister_sync();
	ku_uprobe = NULL;
	WRITE_ONCE(ku_uprobe_task, NULL);
	return 0;
}

static long ku_bench(unsigned long loops)
{
	struct unwind_stacktrace trace;
	unsigned long *entries;
	unsigned long i;
	u64 t0;

	entries = kmalloc_array(511, sizeof(long), GFP_KERNEL);
	if (!entries)
		return -ENOMEM;
	trace.entries = entries;
	t0 = ktime_get_ns();
	for (i = 0; i < loops; i++)
		unwind_user(&trace, 511);
	res.ns = ktime_get_ns() - t0;
	res.frames = trace.nr;
	kfree(entries);
	return 0;
}

static long ku_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct task_struct *k;

	switch (cmd) {
	case KU_NOP:
		return 0;
	case KU_REQ:
		return ku_req(arg);
	case KU_RESULT:
		if (copy_to_user((void __user *)arg, &res, sizeof(res)))
			return -EFAULT;
		if (registered[3]) {
			unwind_deferred_cancel(&tracers[3]);
			registered[3] = false;
		}
		return 0;
	case KU_EBUSY:
		memset(&res, 0, sizeof(res));
		res.id = ++next_id;
		return ku_ebusy();
	case KU_KTHREAD:
		memset(&res, 0, sizeof(res));
		res.id = ++next_id;
		reinit_completion(&ku_kthread_done);
		k = kthread_run(ku_kthread_fn, NULL, "kpatch_unwind");
		if (IS_ERR(k))
			return PTR_ERR(k);
		wait_for_completion(&ku_kthread_done);
		return 0;
	case KU_TIMER: {
		struct ku_timer_arg ta;

		if (copy_from_user(&ta, (void __user *)arg, sizeof(ta)))
			return -EFAULT;
		if (ta.mode != KU_T_IRQ && ta.mode != KU_T_NMI && ta.mode != KU_T_NMI_IRQ_WORK)
			return -EINVAL;
		hrtimer_cancel(&ku_timer);
		memset(&res, 0, sizeof(res));
		res.id = ++next_id;
		res.ret[0] = -EINPROGRESS;
		cur_flags = 0;
		ku_tmode = ta.mode;
		ku_lo = ta.lo;
		ku_hi = ta.hi;
		ku_tries = 0;
		WRITE_ONCE(ku_target, current);
		hrtimer_start(&ku_timer, ns_to_ktime(300 * NSEC_PER_USEC), HRTIMER_MODE_REL);
		return 0;
	}
	case KU_FAULTABLE: {
		struct unwind_stacktrace trace = { 0 };

		memset(&res, 0, sizeof(res));
		res.id = ++next_id;
		cur_flags = 0;
		res.ret[0] = unwind_user_faultable(&trace);
		res.nr[0] = trace.nr;
		if (!res.ret[0])
			ku_print_snapshot(KU_SLOT_FAULTABLE, &trace, 0);
		return 0;
	}
	case KU_BENCH:
		memset(&res, 0, sizeof(res));
		res.id = ++next_id;
		return ku_bench(arg);
	case KU_UPROBE:
		memset(&res, 0, sizeof(res));
		res.id = ++next_id;
		cur_flags = 0;
		return ku_uprobe_on(arg);
	case KU_UPROBE_OFF:
		return ku_uprobe_off();
	}
	return -ENOTTY;
}

#ifdef CONFIG_COMPAT
static long ku_compat_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	if (cmd == KU_RESULT || cmd == KU_TIMER)
		arg = (unsigned long)compat_ptr(arg);
	return ku_ioctl(f, cmd, arg);
}
#endif

/* Print what the test programs write, one printk per line. */
static ssize_t ku_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	char *buf, *p, *nl;

	if (len > 4096)
		len = 4096;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	for (p = buf; *p; p = nl + 1) {
		nl = strchrnul(p, '\n');
		if (nl != p || *nl)
			pr_info("%.*s\n", (int)(nl - p), p);
		if (!*nl)
			break;
	}
	kfree(buf);
	return len;
}

static const struct proc_ops ku_ops = {
	.proc_ioctl = ku_ioctl,
#ifdef CONFIG_COMPAT
	.proc_compat_ioctl = ku_compat_ioctl,
#endif
	.proc_write = ku_write,
	.proc_lseek = noop_llseek,
};

static int __init ku_init(void)
{
	int s, ret;

	stackbuf = kmalloc(KU_STACK_MAX, GFP_KERNEL);
	if (!stackbuf)
		return -ENOMEM;
	for (s = 0; s < 2; s++) {
		ret = unwind_deferred_init(&tracers[s], ku_callback);
		if (ret) {
			pr_err("kpatch_unwind: unwind_deferred_init: %d\n", ret);
			return ret;
		}
		registered[s] = true;
	}
	hrtimer_init(&ku_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	ku_timer.function = ku_timer_fn;
	ret = register_nmi_handler(NMI_LOCAL, ku_nmi, 0, "kpatch_unwind");
	if (ret)
		pr_err("kpatch_unwind: register_nmi_handler: %d\n", ret);
	if (!proc_create("kpatch_unwind", 0666, NULL, &ku_ops))
		return -ENOMEM;
	pr_info("kpatch_unwind: ready (tracer bits A=%d B=%d, UNWIND_PENDING_BIT=%d)\n",
		tracers[0].bit, tracers[1].bit, (int)UNWIND_PENDING_BIT);
	return 0;
}
late_initcall(ku_init);
