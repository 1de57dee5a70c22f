// SPDX-License-Identifier: GPL-2.0
#include <linux/unit.h>

#ifdef CONFIG_X86_64
static int only64(void)
{
	return 64;
}
#else
static int only32(void)
{
	return 32;
}
#endif

static DEFINE_MUTEX(lock);

void noinstr leave(struct task_struct *task, handle h,
		   gfp_t gfp)
{
	struct thing *t;

	instrumentation_begin();
	for_each_thing(t)
		reset(t);
	instrumentation_end();

	note(task, current);
	reset(t);
}

SYSCALL_DEFINE1(broken, int, x)
{
	return x;
}
