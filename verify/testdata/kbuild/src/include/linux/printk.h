/* SPDX-License-Identifier: GPL-2.0 */
/* Linux 6.12's pr_info(), shortened */
#ifndef __KERNEL_PRINTK__
#define __KERNEL_PRINTK__

#define KERN_SOH	"\001"
#define KERN_INFO	KERN_SOH "6"
#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif
int _printk(const char *fmt, ...);
#define printk(fmt, ...) _printk(fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) printk(KERN_INFO pr_fmt(fmt), ##__VA_ARGS__)

#endif
