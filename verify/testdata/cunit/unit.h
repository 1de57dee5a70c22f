/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNIT_H
#define _LINUX_UNIT_H

#define for_each_thing(t) for (t = first(); t; t = next(t))

static __always_inline void reset(struct thing *t)
{
	atomic_long_set(&t->v, 0);
}

#endif
