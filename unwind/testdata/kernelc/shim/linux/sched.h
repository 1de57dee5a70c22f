/* Shim: current and the task flags user.c tests. */
#ifndef _KP_SHIM_LINUX_SCHED_H
#define _KP_SHIM_LINUX_SCHED_H
#include <linux/kernel.h>
#include <asm/ptrace.h>

#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000

struct task_struct {
	unsigned int flags;
};

extern struct task_struct kp_current;
#define current (&kp_current)

#endif
