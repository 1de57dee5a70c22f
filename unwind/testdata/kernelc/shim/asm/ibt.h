/*
 * Shim: is_endbr() of arch/x86/include/asm/ibt.h, as 6.19 has it: with
 * CONFIG_X86_KERNEL_IBT it reads the word and accepts ENDBR64, ENDBR32
 * (bit 24 masked) and the poison NOP (the 6.12 value here); without it,
 * it is false.
 */
#ifndef _KP_SHIM_ASM_IBT_H
#define _KP_SHIM_ASM_IBT_H
#include <linux/types.h>
#include <string.h>

#ifdef CONFIG_X86_KERNEL_IBT
static inline bool __is_endbr(u32 val)
{
	if (val == 0x001f0f66) /* gen_endbr_poison() */
		return true;

	val &= ~0x01000000U; /* ENDBR32 -> ENDBR64 */
	return val == 0xfa1e0ff3; /* gen_endbr() */
}

static inline bool is_endbr(u32 *val)
{
	u32 endbr;

	memcpy(&endbr, val, sizeof(endbr));
	return __is_endbr(endbr);
}
#else
static inline bool is_endbr(u32 *val) { return false; }
#endif

#endif
