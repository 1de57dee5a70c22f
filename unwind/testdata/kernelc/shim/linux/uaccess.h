/*
 * Shim: get_user() reads the test vector's memory. Like the kernel's, it
 * reads sizeof(*ptr) bytes, stores them converted to the type of x (so a
 * u32 is zero-extended into an unsigned long), sets x to 0 on a fault and
 * returns -EFAULT then.
 */
#ifndef _KP_SHIM_LINUX_UACCESS_H
#define _KP_SHIM_LINUX_UACCESS_H
#include <linux/kernel.h>

int kp_read(void *dst, unsigned long addr, unsigned long size);

#define get_user(x, ptr)						\
({									\
	__typeof__(*(ptr)) kp_val = 0;					\
	int kp_err = kp_read(&kp_val, (unsigned long)(ptr), sizeof(*(ptr))); \
	(x) = kp_err ? 0 : kp_val;					\
	kp_err ? -EFAULT : 0;						\
})

#endif
