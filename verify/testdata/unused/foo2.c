// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/skbuff.h>
#include <linux/foo.h>

#define FOO_UNUSED_MACRO(x) ((x) + 1)
#define FOO_USED_MACRO(x) ((x) * 2)

struct foo_node {
	struct hlist_node node;
	int key;
};

static int foo_unused_counter;
static int foo_used_counter;
static const char foo_name[] = "foo";
static int foo_quiet __maybe_unused;

static int foo_match(struct foo_node *n, int key)
{
	return n->key == key;
}

static void foo_consume(struct sk_buff *skb)
{
	foo_used_counter++;
}

static void foo_never_called(void)
{
}

static void __maybe_unused foo_debug(void)
{
}

static inline void foo_inline_unused(void)
{
}

static int foo_lookup(struct hlist_head *head, int key)
{
	struct foo_node *n;

	hlist_for_each_entry_rcu(n, head, node) {
		if (foo_match(n, key))
			return FOO_USED_MACRO(key);
	}
	return 0;
}

int foo_rx(struct sk_buff *list)
{
	struct sk_buff *skb, *next;

	skb_list_walk_safe(list, skb, next) {
		skb_mark_not_on_list(skb);
		foo_consume(skb);
	}
	foo_walk_unknown(NULL);
	return foo_lookup(NULL, 1);
}

static void foo_walk_helper(struct foo_node *n)
{
	n->key = 0;
}

/* cc/v4 cannot read this loop's arguments: the definition is left out */
static void foo_walk_unknown(struct foo_table *t)
{
	struct foo_node *n;

	foo_table_for_each_weird(t, n, <>)
		foo_walk_helper(n);
}

static int __init foo_init(void)
{
	pr_info("%s\n", foo_name);
	return 0;
}

static void __exit foo_exit(void)
{
}

/* As net/ipv4/tcp_bbr.c declares its parameters: a const one nothing
 * reads is for W=1 only (-Wunused-const-variable); a pointer to const is
 * itself a variable (-Wunused-variable). */
static const unsigned int foo_rtt_shift = 9;
static const unsigned char foo_levels[] = { 1, 2, 3 };
static const char *foo_unused_name = "foo";

module_init(foo_init);
module_exit(foo_exit);
MODULE_LICENSE("GPL");

int foo_total(const struct foo_dev *fd)
{
	return foo_count(fd);
}
