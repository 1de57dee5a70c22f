/* A frame given by position rather than by designators. */
#define ARCH_INIT_USER_FP_FRAME 24, -8, 0, 0
