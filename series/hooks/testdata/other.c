#include <linux/o.h>

static unsigned long get_flags(void)
{
	return 0;
}
