/* Only a function-like macro: not a frame. */
#define ARCH_INIT_USER_FP_FRAME(word) .cfa_off = (word) * 2,
