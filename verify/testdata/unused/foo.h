/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_FOO_H
#define _LINUX_FOO_H

struct foo_dev {
	int count;
};

/* used by patch 2 only: introduced before use */
static inline int foo_count(const struct foo_dev *fd)
{
	return fd->count;
}

/* never used by the series */
static inline void foo_reset(struct foo_dev *fd)
{
	fd->count = 0;
}

#endif /* _LINUX_FOO_H */
