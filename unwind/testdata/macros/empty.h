/* What include/linux/unwind_user.h defines when the arch does not. */
#define ARCH_INIT_USER_FP_FRAME
