/* SPDX-License-Identifier: GPL-2.0 */
/* the annotations of Linux 6.12's compiler_types.h and init.h that the
 * test's files use, as the kernel defines them for gcc */
#ifndef __LINUX_COMPILER_TYPES_H
#define __LINUX_COMPILER_TYPES_H

#define __section(section)	__attribute__((__section__(section)))
#define __maybe_unused		__attribute__((__unused__))
#define __used			__attribute__((__used__))
#define __always_unused		__attribute__((__unused__))
#define __always_inline		inline __attribute__((__always_inline__))
#define notrace			__attribute__((__no_instrument_function__))
#define noinline		__attribute__((__noinline__))
#define noinstr			noinline notrace __attribute((__section__(".noinstr.text")))
#define __cold			__attribute__((__cold__))
#define __init			__section(".init.text") __cold
#define __exit			__section(".exit.text") __cold
#define ___PASTE(a, b) a##b
#define __PASTE(a, b) ___PASTE(a, b)
#define __UNIQUE_ID(prefix) __PASTE(__PASTE(__UNIQUE_ID_, prefix), __COUNTER__)

#endif /* __LINUX_COMPILER_TYPES_H */
