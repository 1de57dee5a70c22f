/* Shim: atomic_long_t, for 6.19's include/linux/unwind_deferred_types.h. */
#ifndef _KP_SHIM_LINUX_ATOMIC_H
#define _KP_SHIM_LINUX_ATOMIC_H
typedef struct { long counter; } atomic_long_t;
#endif
