package ktypes

// Types declares the kernel's basic types for a cc/v4 translation unit:
// size_t, s8..u64, bool, and false and true. The sizes follow the ABI
// cc/v4 is configured for (unsigned long is 4 bytes on i386).
const Types = `typedef unsigned long size_t;
typedef signed char s8;
typedef unsigned char u8;
typedef short s16;
typedef unsigned short u16;
typedef int s32;
typedef unsigned int u32;
typedef long long s64;
typedef unsigned long long u64;
typedef _Bool bool;
enum { false = 0, true = 1 };
`

// Names are the typedef names Types declares.
var Names = []string{"size_t", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "bool"}
