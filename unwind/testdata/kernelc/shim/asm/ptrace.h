/* Shim: struct pt_regs and the x86 helpers the unwind headers use. */
#ifndef _KP_SHIM_ASM_PTRACE_H
#define _KP_SHIM_ASM_PTRACE_H
#include <linux/types.h>

struct pt_regs {
	unsigned long ip, sp, bp;
	unsigned long cs, ss;
	unsigned long flags;
};

#define X86_VM_MASK 0x00020000

extern struct pt_regs kp_regs;
extern int kp_compat;

#define instruction_pointer(regs)	((regs)->ip)
#define user_stack_pointer(regs)	((regs)->sp)
#define frame_pointer(regs)		((regs)->bp)
#define user_mode(regs)			1
#define user_64bit_mode(regs)		(!kp_compat)

unsigned long segment_base_address(unsigned int segment);

/* Interrupts do not matter here: run the guarded block once. */
#define scoped_guard(name, ...) for (int kp_once = 1; kp_once; kp_once = 0)

#endif
