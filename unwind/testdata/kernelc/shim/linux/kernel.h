/* Shim: IS_ENABLED() and errno values, as <linux/kernel.h> provides them. */
#ifndef _KP_SHIM_LINUX_KERNEL_H
#define _KP_SHIM_LINUX_KERNEL_H
#include <linux/types.h>
#include <string.h>

#define EFAULT 14
#define EINVAL 22

/*
 * IS_ENABLED(CONFIG_FOO) is 1 when CONFIG_FOO is defined to 1 and 0 when it
 * is not defined: the placeholder macro turns "1" into an extra argument.
 */
#define KP_PLACEHOLDER_1 0,
#define kp_second(ignored, val, ...) val
#define kp_defined3(arg_or_junk) kp_second(arg_or_junk 1, 0)
#define kp_defined2(val) kp_defined3(KP_PLACEHOLDER_##val)
#define kp_defined(x) kp_defined2(x)
#define IS_ENABLED(option) kp_defined(option)

/* BIT(), for_each_set_bit() over one word and WARN_ONCE(), for 6.19. */
#define BIT(nr) (1UL << (nr))
#define for_each_set_bit(bit, addr, size)				\
	for ((bit) = 0; (bit) < (size); (bit)++)			\
		if (!(*(addr) & BIT(bit))) {} else
int kp_warn(const char *fmt, ...);
#define WARN_ONCE(cond, ...) ({ int kp_c = !!(cond); if (kp_c) kp_warn(__VA_ARGS__); kp_c; })

#endif
