#include <linux/a.h>
#include <linux/b.h>

struct task {
	int			a;
	/* The thread: */
	struct thread		thread;
};

static int helper(int x)
{
	return x;
}

void work(struct task *t)
{
	int r;

	prepare(t);
	/* now run it */
	r = run(t, 1);
	finish(t);
}

static int unused_twice(void);
#ifdef A
static void dup(void)
{
}
#else
static void dup(void)
{
}
#endif
