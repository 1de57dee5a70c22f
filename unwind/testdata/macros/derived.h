/* Helper macros, designators out of order, a field left out (zero). */
#define WORD		sizeof(unsigned long)
#define ARCH_INIT_USER_FP_FRAME				\
	.use_fp		= false,			\
	.cfa_off	= WORD * 3,			\
	.ra_off		= -(s32)WORD,
