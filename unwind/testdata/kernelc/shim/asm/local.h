/* Shim: local_t, for include/linux/unwind_deferred_types.h. */
#ifndef _KP_SHIM_ASM_LOCAL_H
#define _KP_SHIM_ASM_LOCAL_H
typedef struct { long counter; } local_t;
#endif
