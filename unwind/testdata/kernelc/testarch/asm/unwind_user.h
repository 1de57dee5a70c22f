/*
 * A test architecture for revisions 2-11, where the generic frame-pointer
 * code exists but x86 does not enable it yet: the x86 frames, without the
 * segment-base hooks (which the generic code only calls from patch 14).
 * TESTARCH_COMPAT adds the compat frame. TESTARCH_SP_FRAME replaces the
 * native frame with one found from the stack pointer that does not restore
 * the frame pointer (fp_off = 0), the shape sframe-style frames take.
 */
#ifndef _TESTARCH_UNWIND_USER_H
#define _TESTARCH_UNWIND_USER_H
#include <asm/ptrace.h>

#ifdef TESTARCH_SP_FRAME
#define ARCH_INIT_USER_FP_FRAME				\
	.cfa_off	= (s32)sizeof(long) *  3,	\
	.ra_off		= (s32)sizeof(long) * -1,	\
	.fp_off		= 0,				\
	.use_fp		= false,
#else
#define ARCH_INIT_USER_FP_FRAME				\
	.cfa_off	= (s32)sizeof(long) *  2,	\
	.ra_off		= (s32)sizeof(long) * -1,	\
	.fp_off		= (s32)sizeof(long) * -2,	\
	.use_fp		= true,
#endif

#ifdef TESTARCH_COMPAT
#define ARCH_INIT_USER_COMPAT_FP_FRAME			\
	.cfa_off	= (s32)sizeof(u32)  *  2,	\
	.ra_off		= (s32)sizeof(u32)  * -1,	\
	.fp_off		= (s32)sizeof(u32)  * -2,	\
	.use_fp		= true,
#define in_compat_mode(regs) !user_64bit_mode(regs)
#endif

#include <asm-generic/unwind_user.h>
#endif
