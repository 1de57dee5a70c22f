/* Shim: local64_t, for include/linux/unwind_deferred_types.h. */
#ifndef _KP_SHIM_ASM_LOCAL64_H
#define _KP_SHIM_ASM_LOCAL64_H
typedef struct { long long counter; } local64_t;
#endif
