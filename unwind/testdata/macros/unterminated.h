/* An #ifdef without its #endif. */
#ifdef CONFIG_X86_64
#define ARCH_INIT_USER_FP_FRAME .cfa_off = 16,
