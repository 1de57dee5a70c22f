/* SPDX-License-Identifier: GPL-2.0 */
/* Linux 6.12's skb list walk, from include/linux/skbuff.h */
#ifndef _LINUX_SKBUFF_H
#define _LINUX_SKBUFF_H

#include <linux/types.h>

struct sk_buff {
	struct sk_buff *next, *prev;
};

#define skb_list_walk_safe(first, skb, next_skb)                               \
	for ((skb) = (first), (next_skb) = (skb) ? (skb)->next : NULL; (skb);  \
	     (skb) = (next_skb), (next_skb) = (skb) ? (skb)->next : NULL)

static inline void skb_mark_not_on_list(struct sk_buff *skb)
{
	skb->next = NULL;
}

#endif
