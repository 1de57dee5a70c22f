package verify

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
)

// reviewPoint is a problem the v11 review (or checkpatch) raised: verify
// must report it under id at patch, on a line that contains text.
type reviewPoint struct {
	id    string
	patch int
	text  string // the reported line contains it
	file  string // the reported file ends with it ("" for the mail)
}

// The points of step 2 (series and message checks).
var messagePoints = map[string][]reviewPoint{
	"co-developed-by": {
		{"CO_DEVELOPED_BY", 5, "Co-developed-by: Steven Rostedt", ""},
		{"CO_DEVELOPED_BY", 6, "Co-developed-by: Steven Rostedt", ""},
	},
	"misspellings": {
		{"REPEATED_WORD", 6, "if the the callback", "kernel/unwind/deferred.c"},
		{"REPEATED_WORD", 10, "UNWIND_ALREADY_PENDING if the the callback", "kernel/unwind/deferred.c"},
		{"SPELLING", 6, "everytime a task makes", "kernel/unwind/deferred.c"},
		{"SPELLING", 6, "deservers its own commit", ""},
		{"SPELLING", 6, "ftrace intance", ""},
		{"SPELLING", 7, "valid for the stracktrace", "kernel/unwind/deferred.c"},
		{"SPELLING", 7, "one of theses architectures", ""},
		{"SPELLING", 7, "Changse since v10", ""},
	},
	"mixed prefixes": {
		{"SUBJECT_PREFIX", 8, "unwind deferred: Use bitmask", ""},
		{"SUBJECT_PREFIX", 9, "unwind deferred: Use SRCU", ""},
		{"SUBJECT_PREFIX", 10, "unwind: Clear unwind_mask", ""},
		{"SUBJECT_PREFIX", 11, "unwind: Finish up unwind", ""},
	},
	"long lines": {
		{"LONG_LINE", 6, "typedef void (*unwind_callback_t)", "include/linux/unwind_deferred.h"},
		{"LONG_LINE", 6, "static inline int unwind_deferred_init", "include/linux/unwind_deferred.h"},
		{"LONG_LINE", 6, "static inline int unwind_deferred_request", "include/linux/unwind_deferred.h"},
	},
}

// checkPoints asserts that the findings under the points' IDs are exactly
// the points: each one found where it says, and nothing else.
func checkPoints(t *testing.T, s *Series, fs []Finding, points []reviewPoint) {
	t.Helper()
	ids := map[string]bool{}
	for _, p := range points {
		ids[p.id] = true
	}
	used := map[int]bool{}
	for _, p := range points {
		found := false
		for i, f := range fs {
			if used[i] || f.ID != p.id || f.Patch != p.patch || (p.file != "" && f.File != p.file) {
				continue
			}
			line, ok := textAt(s, f)
			if subj := s.Patch(f.Patch).Subject; !ok || !strings.Contains(line, p.text) && !(strings.Contains(line, "Subject:") && strings.Contains(subj, strings.SplitN(p.text, ": ", 2)[1])) {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			t.Errorf("%s at patch %d on a line with %q: not reported; %s", p.id, p.patch, p.text, describe(s, only(fs, p.id)))
		}
	}
	for i, f := range fs {
		if ids[f.ID] && !used[i] {
			line, _ := textAt(s, f)
			t.Errorf("unexpected %s at patch %d %s: %s [%q]", f.ID, f.Patch, f.Where(), f.Message, line)
		}
	}
}

func describe(s *Series, fs []Finding) string {
	var b []string
	for _, f := range fs {
		line, _ := textAt(s, f)
		b = append(b, fmt.Sprintf("patch %d %s %q", f.Patch, f.Where(), line))
	}
	sort.Strings(b)
	return "found: [" + strings.Join(b, "; ") + "]"
}

func TestV11MessagePoints(t *testing.T) {
	inputs := map[string]func(testing.TB) *Series{"generated": v11Generated, "seed": seed}
	for in, load := range inputs {
		s := load(t)
		fs := Run(s, seriesOpts(t))
		for name, points := range messagePoints {
			t.Run(in+"/"+name, func(t *testing.T) { checkPoints(t, s, fs, points) })
		}
	}
}

// Ingo Molnar's three points on patches 13 and 14.
var ingoPoints = []reviewPoint{
	{"HEADER_GUARD", 14, "#ifndef _ASM_UNWIND_USER_TYPES_H", "arch/x86/include/asm/unwind_user_types.h"},
	{"X86_PREFIX", 13, "unsigned long segment_base_address(unsigned int segment)", "arch/x86/kernel/ptrace.c"},
	{"MOVE_CHANGES_BODY", 13, "lockdep_assert_irqs_disabled();", "arch/x86/kernel/ptrace.c"},
}

// The task-exit hook of v11 takes the exiting task but reads current.
var taskPoints = []reviewPoint{
	{"TASK_CURRENT", 11, "struct unwind_task_info *info = &current->unwind_info;", "kernel/unwind/deferred.c"},
}

func TestV11TaskCurrent(t *testing.T) {
	for in, load := range map[string]func(testing.TB) *Series{"generated": v11Generated, "seed": seed} {
		s := load(t)
		t.Run(in, func(t *testing.T) { checkPoints(t, s, Run(s, seriesOpts(t)), taskPoints) })
	}
}

func TestV11IngoPoints(t *testing.T) {
	inputs := map[string]func(testing.TB) *Series{"generated": v11Generated, "seed": seed}
	for in, load := range inputs {
		s := load(t)
		fs := Run(s, seriesOpts(t))
		for _, p := range ingoPoints {
			t.Run(in+"/"+p.id, func(t *testing.T) { checkPoints(t, s, fs, []reviewPoint{p}) })
		}
	}
}

// TestV12ResolvesIngoPoints: v12 is how the authors resolved Ingo Molnar's
// three points (the guard names X86, the segment-base helper is gone with
// the move patch, insn_get_seg_base() is used instead), so verify reports
// none of them on v12, while it still reports what v12 left as posted (the
// Co-developed-by order of patches 5 and 6).
func TestV12ResolvesIngoPoints(t *testing.T) {
	g, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: debianTree(t), Base: "v6.12", Version: 12})
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromGenerated(g)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, f := range Run(s, seriesOpts(t)) {
		ids[f.ID]++
	}
	for _, p := range ingoPoints {
		if ids[p.id] != 0 {
			t.Errorf("v12: %d findings under %s, a point v12 resolved", ids[p.id], p.id)
		}
	}
	if ids["CO_DEVELOPED_BY"] != 2 {
		t.Errorf("v12: %d CO_DEVELOPED_BY findings, want the 2 the posted v12 still has", ids["CO_DEVELOPED_BY"])
	}
}

// v11 and v12 reset the unwind state from exit_to_user_mode() after
// instrumentation_end(), and unwind_reset_info() (__always_inline) uses
// instrumented accessors: local64_read()/local64_set() (atomic_long_*
// underneath) from the NMI-safe patch on, try_cmpxchg() from the patch
// that clears the mask. Each is reported once, at the patch and line that
// add it.
var noinstrAccessPoints = map[int][]reviewPoint{
	11: {
		{"NOINSTR_ACCESS", 7, "if (likely(!local64_read(&current->unwind_info.timestamp)))", "include/linux/unwind_deferred.h"},
		{"NOINSTR_ACCESS", 7, "local64_set(&current->unwind_info.timestamp, 0);", "include/linux/unwind_deferred.h"},
		{"NOINSTR_ACCESS", 10, "} while (!try_cmpxchg(&info->unwind_mask, &bits, 0UL));", "include/linux/unwind_deferred.h"},
	},
	12: {
		{"NOINSTR_ACCESS", 7, "if (unlikely(local64_read(&current->unwind_info.timestamp)))", "include/linux/unwind_deferred.h"},
		{"NOINSTR_ACCESS", 7, "local64_set(&current->unwind_info.timestamp, 0);", "include/linux/unwind_deferred.h"},
		{"NOINSTR_ACCESS", 10, "} while (!try_cmpxchg(&info->unwind_mask, &bits, 0UL));", "include/linux/unwind_deferred.h"},
	},
}

func TestNoinstrAccess(t *testing.T) {
	for _, v := range []int{11, 12} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			g, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: debianTree(t), Base: "v6.12", Version: v})
			if err != nil {
				t.Fatal(err)
			}
			s, err := FromGenerated(g)
			if err != nil {
				t.Fatal(err)
			}
			checkPoints(t, s, Run(s, seriesOpts(t)), noinstrAccessPoints[v])
		})
	}
}
