/* SPDX-License-Identifier: GPL-2.0 */
/* Linux 6.12's initcalls as include/linux/init.h defines them without
 * CONFIG_HAVE_ARCH_PREL32_RELOCATIONS, shortened */
#ifndef _LINUX_INIT_H
#define _LINUX_INIT_H

#include <linux/types.h>

#define __initcall_id(fn) __PASTE(__KBUILD_MODNAME, __PASTE(__, __PASTE(__COUNTER__, __PASTE(_, __PASTE(__LINE__, __PASTE(_, fn))))))
#define __initcall_name(prefix, __iid, id) __PASTE(__, __PASTE(prefix, __PASTE(__, __PASTE(__iid, id))))
#define ____define_initcall(fn, __name, __sec)	\
	static initcall_t __name __used		\
		__attribute__((__section__(__sec))) = fn;
#define ___define_initcall(fn, id, __sec) \
	____define_initcall(fn, __initcall_name(initcall, __initcall_id(fn), id), #__sec ".init")
#define __define_initcall(fn, id) ___define_initcall(fn, id, .initcall##id)
#define device_initcall(fn)		__define_initcall(fn, 6)
#define __initcall(fn) device_initcall(fn)
#define __exitcall(fn)						\
	static exitcall_t __exitcall_##fn __exit_call = fn
#define __exit_call	__used __section(".exitcall.exit")

#endif /* _LINUX_INIT_H */
