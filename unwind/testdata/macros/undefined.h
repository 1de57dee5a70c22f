/* A frame that uses a name nothing defines. */
#define ARCH_INIT_USER_FP_FRAME				\
	.cfa_off	= UNKNOWN_THING * 2,		\
	.use_fp		= true,
