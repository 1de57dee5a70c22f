/* SPDX-License-Identifier: GPL-2.0 */
/* Linux 6.12's include/linux/types.h, the part the test's files use */
#ifndef _LINUX_TYPES_H
#define _LINUX_TYPES_H

#define NULL ((void *)0)
typedef _Bool bool;
typedef unsigned long uintptr_t;
typedef int (*initcall_t)(void);
typedef void (*exitcall_t)(void);

struct hlist_head {
	struct hlist_node *first;
};

struct hlist_node {
	struct hlist_node *next, **pprev;
};

#endif /* _LINUX_TYPES_H */
