/* Values converted to s32 and bool as C converts them. */
#define ARCH_INIT_USER_FP_FRAME .cfa_off = 0x100000010LL, .ra_off = -8, .use_fp = 2,
