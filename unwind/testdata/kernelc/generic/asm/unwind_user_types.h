/* What Kbuild generates for a mandatory-y header an arch lacks. */
#include <asm-generic/unwind_user_types.h>
