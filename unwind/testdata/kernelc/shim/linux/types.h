/* Shim: the kernel types user.c and the unwind headers use. */
#ifndef _KP_SHIM_LINUX_TYPES_H
#define _KP_SHIM_LINUX_TYPES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int8_t s8;
typedef uint8_t u8;
typedef int16_t s16;
typedef uint16_t u16;
typedef int32_t s32;
typedef uint32_t u32;
typedef int64_t s64;
typedef uint64_t u64;

#define __user
#define __force

struct list_head {
	struct list_head *next, *prev;
};

struct callback_head {
	struct callback_head *next;
	void (*func)(struct callback_head *head);
};

#endif
