#include <linux/a.h>

static void notify(struct irq_work *entry)
{
	test_and_set_tsk_thread_flag(current, TIF_NOTIFY_RESUME);
}

int add(struct task_struct *task, int notify)
{
	switch (notify) {
	case TWA_RESUME:
		set_notify_resume(task);
		break;
	case TWA_NMI_CURRENT:
		irq_work_queue(this_cpu_ptr(&irq_work_NMI_resume));
		break;
	}
	trace = get_chain(regs, kernel, user, max_depth,
			  false, false);
	return 0;
}

#ifdef CONFIG_UPROBES
static bool at_entry(struct pt_regs *regs)
{
	return true;
}

#else
static bool at_entry(struct pt_regs *regs)
{
	return false;
}
#endif /* CONFIG_UPROBES */

int other(void)
{
	trace = get_chain(regs, kernel, user, max_depth,
			  crosstask, false);
	if (add_mark)
		store(PERF_CONTEXT_KERNEL);
	if (add_mark)
		store(PERF_CONTEXT_USER);
	return 0;
}
