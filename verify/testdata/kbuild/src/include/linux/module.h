/* SPDX-License-Identifier: GPL-2.0 */
/* Linux 6.12's include/linux/module.h for built-in code, shortened */
#ifndef _LINUX_MODULE_H
#define _LINUX_MODULE_H

#include <linux/init.h>
#include <linux/printk.h>

#define module_init(x)	__initcall(x);
#define module_exit(x)	__exitcall(x);
#define __MODULE_INFO(tag, name, info)					  \
	static const char __UNIQUE_ID(name)[]				  \
		__used __section(".modinfo") __attribute__((__aligned__(1))) \
		= #tag "=" info
#define MODULE_INFO(tag, info) __MODULE_INFO(tag, tag, info)
#define MODULE_LICENSE(_license) MODULE_INFO(license, _license)

#endif /* _LINUX_MODULE_H */
