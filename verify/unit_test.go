package verify

import (
	"testing"
)

func TestGuardNamespace(t *testing.T) {
	for _, c := range []struct{ path, ns, want string }{
		{"include/linux/unwind_user.h", "_LINUX_", "_LINUX_UNWIND_USER_H"},
		{"include/linux/sched/task_stack.h", "_LINUX_", "_LINUX_SCHED_TASK_STACK_H"},
		{"include/asm-generic/unwind_user_types.h", "_ASM_GENERIC_", "_ASM_GENERIC_UNWIND_USER_TYPES_H"},
		{"arch/x86/include/asm/unwind_user_types.h", "_ASM_X86_", "_ASM_X86_UNWIND_USER_TYPES_H"},
		{"arch/arm64/include/asm/stacktrace.h", "_ASM_ARM64_", "_ASM_ARM64_STACKTRACE_H"},
		{"kernel/unwind/local.h", "", ""},
	} {
		ns, want := guardNamespace(c.path)
		if ns != c.ns || want != c.want {
			t.Errorf("%s: %q %q, want %q %q", c.path, ns, want, c.ns, c.want)
		}
	}
}

func TestHeaderGuard(t *testing.T) {
	for _, c := range []struct {
		src   string
		guard string
		line  int
		ok    bool
	}{
		{"/* SPDX-License-Identifier: GPL-2.0 */\n#ifndef _A_H\n#define _A_H\n#endif\n", "_A_H", 2, true},
		{"/*\n * comment\n */\n\n#ifndef _A_H\n\n#define _A_H\n", "_A_H", 5, true},
		{"#ifndef _A_H\n#define _B_H\n", "_A_H", 1, false},
		{"#include <x.h>\n#ifndef _A_H\n", "", 0, false},
	} {
		g, l, ok := headerGuard([]byte(c.src))
		if g != c.guard || l != c.line || ok != c.ok {
			t.Errorf("%q: %q %d %v, want %q %d %v", c.src, g, l, ok, c.guard, c.line, c.ok)
		}
	}
}

func TestCondBlocks(t *testing.T) {
	src := "#ifndef _G_H\n#define _G_H\n#ifdef CONFIG_A\nint a(void);\n#ifdef CONFIG_B\n#else\n#endif\n#else\nstatic inline int a(void) { return 0; }\n#endif\n#if IS_ENABLED(CONFIG_C)\n#endif\n#endif\n"
	bs := condBlocks([]byte(src))
	if len(bs) != 2 || bs[0].option != "CONFIG_B" || bs[1] != (condBlock{"CONFIG_A", 3, 8, 10}) {
		t.Errorf("condBlocks: %+v", bs)
	}
}
