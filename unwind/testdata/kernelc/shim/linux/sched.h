/* Shim: current, the task flags user.c tests and its uprobe state. */
#ifndef _KP_SHIM_LINUX_SCHED_H
#define _KP_SHIM_LINUX_SCHED_H
#include <linux/kernel.h>
#include <asm/ptrace.h>

#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000

struct arch_uprobe;

/* The part of struct uprobe_task that is_uprobe_at_func_entry() reads. */
struct uprobe_task {
	struct arch_uprobe *auprobe;
};

struct task_struct {
	unsigned int flags;
	struct uprobe_task *utask;
};

extern struct task_struct kp_current;
#define current (&kp_current)

#endif
