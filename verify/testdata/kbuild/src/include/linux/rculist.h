/* SPDX-License-Identifier: GPL-2.0 */
/* Linux 6.12's hlist_for_each_entry_rcu() with the macros it expands
 * (without CONFIG_PROVE_RCU_LIST), from include/linux/rculist.h,
 * list.h, container_of.h and rcupdate.h */
#ifndef _LINUX_RCULIST_H
#define _LINUX_RCULIST_H

#include <linux/types.h>

#define offsetof(TYPE, MEMBER)	__builtin_offsetof(TYPE, MEMBER)
#define container_of(ptr, type, member) ({				\
	void *__mptr = (void *)(ptr);					\
	((type *)(__mptr - offsetof(type, member))); })
#define hlist_entry(ptr, type, member) container_of(ptr,type,member)
#define hlist_entry_safe(ptr, type, member) \
	({ typeof(ptr) ____ptr = (ptr); \
	   ____ptr ? hlist_entry(____ptr, type, member) : NULL; \
	})
#define rcu_dereference_raw(p) \
({ \
	typeof(p) ________p1 = (*(const volatile typeof(p) *)&(p)); \
	((typeof(*p) *)(________p1)); \
})
#define hlist_first_rcu(head)	(*((struct hlist_node **)(&(head)->first)))
#define hlist_next_rcu(node)	(*((struct hlist_node **)(&(node)->next)))
#define check_arg_count_one(dummy)
#define __list_check_rcu(dummy, cond, extra...)				\
	({ check_arg_count_one(extra); })

#define hlist_for_each_entry_rcu(pos, head, member, cond...)		\
	for (__list_check_rcu(dummy, ## cond, 0),			\
	     pos = hlist_entry_safe(rcu_dereference_raw(hlist_first_rcu(head)),\
			typeof(*(pos)), member);			\
		pos;							\
		pos = hlist_entry_safe(rcu_dereference_raw(hlist_next_rcu(\
			&(pos)->member)), typeof(*(pos)), member))

#endif
