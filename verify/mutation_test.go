package verify

import (
	"strings"
	"sync"
	"testing"
)

// mutation breaks one invariant in a copy of the corrected v11 and says
// where verify must report it.
type mutation struct {
	name  string
	edits []edit
	want  []reviewPoint // one per build that breaks
}

// Template text the mutations edit that a revision guard splits.
const (
	// fpFrame is x86's ARCH_INIT_USER_FP_FRAME up to the sign of ra_off's
	// multiplier (before v14 it comes first in the header, from v14 last).
	fpFrame = "#define ARCH_INIT_USER_FP_FRAME\t\t\t\t\t\t\t\\\n\t.cfa_off\t= (s32)sizeof(long) *  2,\t\t\t\t\\\n\t.ra_off\t\t= (s32)sizeof(long) * -"
	// readTimestamp opens the comment above get_timestamp() in the
	// deferred patch of revisions before v13 (inside since "deferred").
	readTimestamp = "/*\n{{end}}\n{{if and (lt .Version 13) (since \"deferred\")}}\n * Read the task context timestamp"
)

var mutations = []mutation{
	{"guard outside the namespace", []edit{{"files/include/linux/unwind_user.h.tmpl",
		"#ifndef _LINUX_UNWIND_USER_H\n#define _LINUX_UNWIND_USER_H", "#ifndef _UNWIND_USER_H\n#define _UNWIND_USER_H"}},
		[]reviewPoint{{"HEADER_GUARD", 1, "#ifndef _UNWIND_USER_H", "include/linux/unwind_user.h"}}},
	{"guard not defined", []edit{{"files/include/asm-generic/unwind_user_types.h.tmpl",
		"#define _ASM_GENERIC_UNWIND_USER_TYPES_H", "#define _ASM_GENERIC_UNWIND_USER_TYPE_H"}},
		[]reviewPoint{{"HEADER_GUARD", 3, "#ifndef _ASM_GENERIC_UNWIND_USER_TYPES_H", "include/asm-generic/unwind_user_types.h"}}},
	{"global x86 helper without x86_", []edit{
		{"v11/x86-segment-base.patch", "arch/x86/kernel/ptrace.c get_flags x86_get_segment_base", "arch/x86/kernel/ptrace.c get_flags segment_base"},
		{"v11/x86-segment-base.patch", "rename-calls get_segment_base x86_get_segment_base", "rename-calls get_segment_base segment_base"},
		{"v11/x86-segment-base.patch", "+unsigned long x86_get_segment_base(unsigned int segment);", "+unsigned long segment_base(unsigned int segment);"},
		{"v11/x86-segment-base-lockdep.patch", "statement-before x86_get_segment_base", "statement-before segment_base"},
		{"files/arch/x86/include/asm/unwind_user.h.tmpl", "cs_base = x86_get_segment_base(regs->cs);", "cs_base = segment_base(regs->cs);"},
		{"files/arch/x86/include/asm/unwind_user.h.tmpl", "ss_base = x86_get_segment_base(regs->ss);", "ss_base = segment_base(regs->ss);"},
	}, []reviewPoint{{"X86_PREFIX", 13, "unsigned long segment_base(unsigned int segment)", "arch/x86/kernel/ptrace.c"}}},
	{"move that changes the body", []edit{{"v11/x86-segment-base.patch",
		"@ arch/x86/include/asm/ptrace.h:", "@ arch/x86/kernel/ptrace.c: statement-before x86_get_segment_base \"return get_desc_base(desc);\"\n+\tWARN_ON_ONCE(!desc);\n+\n@ arch/x86/include/asm/ptrace.h:"}},
		[]reviewPoint{{"MOVE_CHANGES_BODY", 13, "WARN_ON_ONCE(!desc);", "arch/x86/kernel/ptrace.c"}}},
	{"cache over a page on x86_64", []edit{{"files/kernel/unwind/deferred.c.tmpl",
		"((SZ_4K - sizeof(struct unwind_cache)) / sizeof(long))", "((SZ_4K - sizeof(struct unwind_cache)) / sizeof(int))"}},
		[]reviewPoint{{"CACHE_PAGE", 5, "#define UNWIND_MAX_ENTRIES", "kernel/unwind/deferred.c"}}},
	{"reserved bit handed out", []edit{{"files/kernel/unwind/deferred.c.tmpl",
		"if (unwind_mask == ~(UNWIND_PENDING))", "if (unwind_mask == ~0UL)"}},
		[]reviewPoint{{"RESERVED_BITS", 10, "if (unwind_mask == ~0UL)", "kernel/unwind/deferred.c"}, {"RESERVED_BITS", 10, "if (unwind_mask == ~0UL)", "kernel/unwind/deferred.c"}}},
	{"stub of another type", []edit{{"files/include/linux/unwind_deferred.h.tmpl",
		"static inline int unwind_deferred_request(struct unwind_work *work, u64 *timestamp)\n{", "static inline int unwind_deferred_request(struct unwind_work *work, u32 *timestamp)\n{"}},
		[]reviewPoint{{"STUB_PARITY", 6, "static inline int unwind_deferred_request(struct unwind_work *work, u32 *timestamp)", "include/linux/unwind_deferred.h"}}},
	{"stub missing", []edit{{"files/include/linux/unwind_deferred.h.tmpl",
		"static inline void unwind_deferred_cancel(struct unwind_work *work) {}\n", ""}},
		[]reviewPoint{{"STUB_PARITY", 6, "void unwind_deferred_cancel(struct unwind_work *work);", "include/linux/unwind_deferred.h"}}},
	{"frame layout", []edit{{"files/arch/x86/include/asm/unwind_user.h.tmpl",
		"{{if lt .Version 14}}\n" + fpFrame + "1,", "{{if lt .Version 14}}\n" + fpFrame + "2,"}},
		[]reviewPoint{{"FRAME_LAYOUT", 12, "#define ARCH_INIT_USER_FP_FRAME", "arch/x86/include/asm/unwind_user.h"}, {"FRAME_LAYOUT", 12, "#define ARCH_INIT_USER_FP_FRAME", "arch/x86/include/asm/unwind_user.h"}}},
	{"Kconfig select of an unknown symbol", []edit{{"v11/x86-fp.patch", "+\tselect HAVE_UNWIND_USER_FP", "+\tselect HAVE_UNWIND_USER_FRAME_POINTER"}},
		[]reviewPoint{{"KCONFIG_SYMBOL", 12, "select HAVE_UNWIND_USER_FRAME_POINTER", "arch/x86/Kconfig"}}},
	{"arch hook override of another type", []edit{{"files/arch/x86/include/asm/unwind_user.h.tmpl",
		"\nstatic inline void arch_unwind_user_next(struct unwind_user_state *state)\n",
		"\nstatic inline void arch_unwind_user_next(struct unwind_user_state *state, int step)\n"}},
		[]reviewPoint{{"ARCH_HOOK", 15, "static inline void arch_unwind_user_next(struct unwind_user_state *state, int step)", "arch/x86/include/asm/unwind_user.h"}}},
	{"arch hook override without its #define", []edit{{"files/arch/x86/include/asm/unwind_user.h.tmpl",
		"{{if since \"x86-compat-fp\"}}\n#define arch_unwind_user_next arch_unwind_user_next\n", "{{if since \"x86-compat-fp\"}}\n"}},
		[]reviewPoint{{"ARCH_HOOK", 15, "static inline void arch_unwind_user_next(struct unwind_user_state *state)", "arch/x86/include/asm/unwind_user.h"}}},
	{"upper-case macro acting as a function", []edit{{"files/arch/x86/include/asm/unwind_user.h.tmpl",
		"#define in_compat_mode(regs) !user_64bit_mode(regs)", "#define IN_COMPAT_MODE(regs) !user_64bit_mode(regs)"}},
		[]reviewPoint{{"MACRO_CASE", 15, "#define IN_COMPAT_MODE(regs)", "arch/x86/include/asm/unwind_user.h"}}},
	{"author without Signed-off-by", []edit{{"v11/x86-segment-base.patch", "Signed-off-by: Josh Poimboeuf <jpoimboe@kernel.org>\n", ""}},
		[]reviewPoint{{"AUTHOR_SIGN_OFF", 13, "---", ""}}},
	{"sender's Signed-off-by not last", []edit{{"v11/x86-segment-base.patch",
		"Signed-off-by: Josh Poimboeuf <jpoimboe@kernel.org>\nSigned-off-by: Steven Rostedt (Google) <rostedt@goodmis.org>\n",
		"Signed-off-by: Steven Rostedt (Google) <rostedt@goodmis.org>\nSigned-off-by: Josh Poimboeuf <jpoimboe@kernel.org>\n"}},
		[]reviewPoint{{"SENDER_SIGN_OFF", 13, "Signed-off-by: Josh Poimboeuf", ""}}},
	{"signature given twice", []edit{{"v11/x86-segment-base.patch",
		"Signed-off-by: Josh Poimboeuf <jpoimboe@kernel.org>\nSigned-off-by: Steven Rostedt (Google) <rostedt@goodmis.org>\n",
		"Signed-off-by: Josh Poimboeuf <jpoimboe@kernel.org>\nSigned-off-by: Steven Rostedt (Google) <rostedt@goodmis.org>\nSigned-off-by: Steven Rostedt (Google) <rostedt@goodmis.org>\n"}},
		[]reviewPoint{{"DUPLICATE_SIGN_OFF", 13, "Signed-off-by: Steven Rostedt (Google)", ""}}},
	{"trailing whitespace", []edit{{"files/kernel/unwind/user.c.tmpl", "#include <linux/uaccess.h>\n", "#include <linux/uaccess.h> \n"}},
		[]reviewPoint{{"TRAILING_WHITESPACE", 2, "#include <linux/uaccess.h> ", "kernel/unwind/user.c"}}},
	{"task function reading current", []edit{{"files/kernel/unwind/deferred.c.tmpl",
		"\tstruct unwind_task_info *info = &task->unwind_info;\n{{end}}\n{{if since \"deferred\"}}\n\tstruct unwind_stacktrace trace;",
		"\tstruct unwind_task_info *info = &current->unwind_info;\n{{end}}\n{{if since \"deferred\"}}\n\tstruct unwind_stacktrace trace;"}},
		[]reviewPoint{{"TASK_CURRENT", 11, "struct unwind_task_info *info = &current->unwind_info;", "kernel/unwind/deferred.c"}}},
	{"static function before its first use", []edit{{"files/kernel/unwind/deferred.c.tmpl",
		readTimestamp, "static void unwind_debug_dump(void)\n{\n}\n\n" + readTimestamp}},
		[]reviewPoint{{"UNUSED_STATIC", 6, "static void unwind_debug_dump(void)", "kernel/unwind/deferred.c"}}},
	{"function-like macro before its first use", []edit{{"files/kernel/unwind/deferred.c.tmpl",
		readTimestamp, "#define unwind_dbg(fmt, ...) pr_debug(fmt, ##__VA_ARGS__)\n\n" + readTimestamp}},
		[]reviewPoint{{"UNUSED_MACRO", 6, "#define unwind_dbg(fmt, ...)", "kernel/unwind/deferred.c"}}},
	{"static inline in a header before its first use", []edit{{"files/include/linux/unwind_deferred.h.tmpl",
		"void unwind_deferred_task_exit(struct task_struct *task);\n\n{{end}}\n",
		"void unwind_deferred_task_exit(struct task_struct *task);\n\nstatic inline bool unwind_task_exiting(struct task_struct *task)\n{\n\treturn task->flags & PF_EXITING;\n}\n\n{{end}}\n"}},
		[]reviewPoint{{"UNUSED_INLINE", 11, "static inline bool unwind_task_exiting(struct task_struct *task)", "include/linux/unwind_deferred.h"}}},
	{"non-inline call after instrumentation_end()", []edit{{"files/include/linux/unwind_deferred.h.tmpl",
		"static __always_inline void unwind_reset_info(void)", "static inline void unwind_reset_info(void)"},
		{"v11/cache.patch", "statement-before exit_to_user_mode trace_hardirqs_on_prepare", "statement-before exit_to_user_mode user_enter_irqoff"}},
		[]reviewPoint{{"NOINSTR_CALL", 5, "unwind_reset_info();", "include/linux/entry-common.h"}}},
	{"unsigned bit compared with zero", []edit{{"files/kernel/unwind/deferred.c.tmpl",
		"{{if and (lt .Version 14) (since \"srcu\")}}\n\tint bit;\n", "{{if and (lt .Version 14) (since \"srcu\")}}\n\tunsigned int bit;\n"}},
		[]reviewPoint{{"TYPE_LIMITS", 9, "if (WARN_ON_ONCE(bit < 0))", "kernel/unwind/deferred.c"}}},
	{"IS_ENABLED() without CONFIG_", []edit{{"files/kernel/unwind/user.c.tmpl",
		"\treturn IS_ENABLED(CONFIG_HAVE_UNWIND_USER_FP) &&\n\t       state->type == UNWIND_USER_TYPE_FP;",
		"\treturn IS_ENABLED(HAVE_UNWIND_USER_FP) &&\n\t       state->type == UNWIND_USER_TYPE_FP;"}},
		[]reviewPoint{{"IS_ENABLED_CONFIG", 2, "return IS_ENABLED(HAVE_UNWIND_USER_FP) &&", "kernel/unwind/user.c"}}},
	{"task_work_add() from NMI without TWA_NMI_CURRENT", []edit{{"files/kernel/unwind/deferred.c.tmpl",
		"ret = task_work_add(current, &info->work, in_nmi() ? TWA_NMI_CURRENT : TWA_RESUME);", "ret = task_work_add(current, &info->work, TWA_RESUME);"}},
		[]reviewPoint{{"NMI_UNSAFE", 7, "ret = task_work_add(current, &info->work, TWA_RESUME);", "kernel/unwind/deferred.c"}}},
	{"mutex in a function that may run in NMI", []edit{{"files/kernel/unwind/deferred.c.tmpl",
		"\t/* The work has been claimed, now schedule it. */\n", "\t/* The work has been claimed, now schedule it. */\n\tguard(mutex)(&callback_mutex);\n"}},
		[]reviewPoint{{"NMI_UNSAFE", 7, "guard(mutex)(&callback_mutex);", "kernel/unwind/deferred.c"}}},
	{"instrumented access after instrumentation_end()", []edit{{"v11/cache.patch",
		"@ include/linux/entry-common.h: statement-before exit_to_user_mode trace_hardirqs_on_prepare\n+\tunwind_reset_info();\n",
		"@ include/linux/entry-common.h: statement-before exit_to_user_mode trace_hardirqs_on_prepare\n+\tunwind_reset_info();\n\n" +
			"@ include/linux/entry-common.h: statement-before exit_to_user_mode user_enter_irqoff\n+\tatomic_long_inc(&current->unwind_info.exits);\n"}},
		[]reviewPoint{{"NOINSTR_ACCESS", 5, "atomic_long_inc(&current->unwind_info.exits);", "include/linux/entry-common.h"}}},
}

var (
	fixedOnce sync.Once
	fixed     []Finding
	fixedS    *Series
)

// TestMutations: each mutation of the corrected series is reported under
// its ID at the right patch and line, and the corrected series itself has
// no finding under that ID.
func TestMutations(t *testing.T) {
	fixedOnce.Do(func() {
		fixedS = generate(t, specCopy(t, true))
		fixed = Run(fixedS, seriesOpts(t))
	})
	for _, m := range mutations {
		t.Run(strings.ReplaceAll(m.name, " ", "_"), func(t *testing.T) {
			t.Parallel() // each generates its own series; Run only reads it
			id := m.want[0].id
			if got := only(fixed, id); len(got) != 0 {
				t.Errorf("the corrected series has %s: %s", id, describe(fixedS, got))
			}
			s := generate(t, specCopy(t, true, m.edits...))
			checkPoints(t, s, Run(s, seriesOpts(t)), m.want)
		})
	}
}
