/* Shim: the user registers of current. */
#ifndef _KP_SHIM_LINUX_SCHED_TASK_STACK_H
#define _KP_SHIM_LINUX_SCHED_TASK_STACK_H
#include <linux/sched.h>

#define task_pt_regs(task) (&kp_regs)

#endif
