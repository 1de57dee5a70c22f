savedcmd_kernel/fork.o := gcc -Wp,-MMD,kernel/.fork.o.d -nostdinc -I/k/src/arch/x86/include -I./arch/x86/include/generated -c -o kernel/fork.o /k/src/kernel/fork.c  

source_kernel/fork.o := /k/src/kernel/fork.c

deps_kernel/fork.o := \
  /k/src/include/linux/compiler-version.h \
    $(wildcard include/config/CC_VERSION_TEXT) \
  /k/src/include/linux/kconfig.h \
    $(wildcard include/config/CPU_BIG_ENDIAN) \
  /k/src/include/linux/sched.h \
    $(wildcard include/config/UNWIND_USER) \
  arch/x86/include/generated/asm/unwind_user.h \
  /usr/lib/gcc/x86_64-linux-gnu/12/include/stdarg.h \

kernel/fork.o: $(deps_kernel/fork.o)

$(deps_kernel/fork.o):
