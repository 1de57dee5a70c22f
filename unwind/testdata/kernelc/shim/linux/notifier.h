/* Shim: nothing of <linux/notifier.h> is used; asm/uprobes.h includes it. */
#ifndef _KP_SHIM_LINUX_NOTIFIER_H
#define _KP_SHIM_LINUX_NOTIFIER_H
#include <linux/types.h>
#endif
