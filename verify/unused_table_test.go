package verify

import (
	"sort"
	"strings"
	"testing"

	"kpatch/plumbing/kernelsrc"
)

// TestUnusedStaticTableMacro: a static function used only through a
// macro of a table's entry is used: 6.12's amdgpu_pm.c defines
// amdgpu_get_pp_dpm_vclk1() and amdgpu_set_pp_dpm_vclk1() for
// AMDGPU_DEVICE_ATTR_RW(pp_dpm_vclk1, ...) in its amdgpu_device_attrs[]
// table (the macro, from amdgpu_pm.h, pastes the names). A patch adding
// such a pair (a vclk2, made from vclk1's code) got two UNUSED_STATIC
// errors read with the prelude, as did the merged code of
// drivers/gpu/drm/amd/pm (nine). A pair without its entry is still
// unused.
func TestUnusedStaticTableMacro(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	const path = "drivers/gpu/drm/amd/pm/amdgpu_pm.c"
	const pair = "static ssize_t amdgpu_get_pp_dpm_vclk1(struct device *dev,\n\t\tstruct device_attribute *attr,\n\t\tchar *buf)\n{\n\treturn amdgpu_get_pp_dpm_clock(dev, PP_VCLK1, buf);\n}\n\nstatic ssize_t amdgpu_set_pp_dpm_vclk1(struct device *dev,\n\t\tstruct device_attribute *attr,\n\t\tconst char *buf,\n\t\tsize_t count)\n{\n\treturn amdgpu_set_pp_dpm_clock(dev, PP_VCLK1, buf, count);\n}\n"
	const entry = "\tAMDGPU_DEVICE_ATTR_RW(pp_dpm_vclk1,"
	for _, c := range []struct {
		name      string
		withEntry bool
		want      int
	}{
		{"with its table entry", true, 0},
		{"without", false, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := treeMail(t, tree, "drm/amd/pm: add vclk2", "Add it.", []string{path}, func(files map[string]string) {
				text := files[path]
				if !strings.Contains(text, pair) || !strings.Contains(text, entry) {
					t.Fatalf("%s has changed", path)
				}
				text = strings.Replace(text, pair, pair+"\n"+strings.ReplaceAll(strings.ReplaceAll(pair, "vclk1", "vclk2"), "PP_VCLK1", "PP_VCLK1"), 1)
				if c.withEntry {
					i := strings.Index(text, entry)
					end := i + strings.Index(text[i:], "),\n") + 3 // the entry's two lines
					text = text[:end] + strings.ReplaceAll(text[i:end], "vclk1", "vclk2") + text[end:]
				}
				files[path] = text
			})
			got := only(Run(s, Options{Ignore: []string{"SPELLING"}}), "UNUSED_STATIC")
			if len(got) != c.want {
				t.Errorf("UNUSED_STATIC %v, want %d", got, c.want)
			}
		})
	}
}

// TestUnusedConstPastedByFileMacro: a static const used only through
// the file's own pasting macro is used. BBRv3 (CachyOS's 6.12 patch set)
// reads its parameters as bbr_param(sk, tso_rtt_shift), with
// "#define bbr_param(sk,name) (bbr_ ## name)", in code verify's prelude
// cannot parse (BITS_PER_TYPE() is not in it): no line names
// bbr_tso_rtt_shift whole and the code that invokes the macro is not
// expanded, so verify warned UNUSED_CONST four times where the build
// trees' reading (and gcc's W=1) see uses. The same parameter without
// its use is still unused. The lines are BBRv3's, in 6.12's tcp_bbr.c.
func TestUnusedConstPastedByFileMacro(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	const path = "net/ipv4/tcp_bbr.c"
	const anchor = "static const int bbr_pacing_margin_percent = 1;\n"
	const at = "\tsegs = max_t(u32, bytes / tp->mss_cache, bbr_min_tso_segs(sk));\n"
	const param = "\n/* Halve the burst allowance per 2^tso_rtt_shift us of min_rtt. */\nstatic const u32 bbr_tso_rtt_shift = 9;\n"
	const use = "\tif (bbr_param(sk, tso_rtt_shift)) {\n\t\tu32 r = tp->srtt_us >> bbr_param(sk, tso_rtt_shift);\n\n\t\tif (r < BITS_PER_TYPE(u32))   /* prevent undefined behavior */\n\t\t\tbytes += GSO_LEGACY_MAX_SIZE >> r;\n\t}\n"
	for _, c := range []struct {
		name    string
		withUse bool
		want    int
	}{
		{"read through bbr_param()", true, 0},
		{"not read", false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := treeMail(t, tree, "tcp_bbr: add the tso_rtt_shift parameter", "Add it.", []string{path}, func(files map[string]string) {
				text := files[path]
				if !strings.Contains(text, anchor) || !strings.Contains(text, at) {
					t.Fatalf("%s has changed", path)
				}
				text = strings.Replace(text, anchor, "#define bbr_param(sk,name)\t(bbr_ ## name)\n\n"+anchor+param, 1)
				if c.withUse {
					text = strings.Replace(text, at, use+at, 1)
				}
				files[path] = text
			})
			got := only(Run(s, Options{Ignore: []string{"SPELLING"}}), "UNUSED_CONST")
			if len(got) != c.want {
				t.Errorf("UNUSED_CONST %v, want %d", got, c.want)
			}
		})
	}
}

// TestUnusedInlineShimHeader: a header the series creates in place of
// one the tree's files include gives them its static inline functions.
// prjc (linux-tkg's 6.12 scheduler) creates kernel/sched/alt_sched.h and
// has kernel/sched/sched.h include it; idle.c, psi.c and the others
// beside it call its task_current() and raw_spin_rq_lock_irq() as they
// call sched.h's. Twelve of its fourteen UNUSED_INLINE warnings were
// such functions; the two no file calls stay. Without the include, no
// file of the tree sees the header, and its functions are unused.
func TestUnusedInlineShimHeader(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	const sched = "kernel/sched/sched.h"
	const guard = "#define _KERNEL_SCHED_SCHED_H\n"
	const alt = "kernel/sched/alt_sched.h"
	const header = "/* SPDX-License-Identifier: GPL-2.0 */\n#ifndef _KERNEL_SCHED_ALT_SCHED_H\n#define _KERNEL_SCHED_ALT_SCHED_H\n\n" +
		"static inline int task_current(struct rq *rq, struct task_struct *p)\n{\n\treturn rq->curr == p;\n}\n\n" +
		"static inline u64 __rq_clock_broken(struct rq *rq)\n{\n\treturn READ_ONCE(rq->clock);\n}\n\n#endif /* _KERNEL_SCHED_ALT_SCHED_H */\n"
	for _, c := range []struct {
		name        string
		withInclude bool
		want        []string
	}{
		{"included by sched.h", true, []string{"__rq_clock_broken"}},
		{"included by nothing", false, []string{"__rq_clock_broken", "task_current"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := treeMail(t, tree, "sched/alt: add the alternative scheduler's header", "Add it.", []string{sched}, func(files map[string]string) {
				if !strings.Contains(files[sched], guard) {
					t.Fatalf("%s has changed", sched)
				}
				if c.withInclude {
					files[sched] = strings.Replace(files[sched], guard, guard+"\n#ifdef CONFIG_SCHED_ALT\n#include \"alt_sched.h\"\n#else\n", 1)
					files[sched] = strings.TrimSuffix(files[sched], "\n") + "\n#endif /* !CONFIG_SCHED_ALT */\n"
				}
				files[alt] = header
			})
			var got []string
			for _, f := range only(Run(s, Options{Ignore: []string{"SPELLING"}}), "UNUSED_INLINE") {
				for _, name := range []string{"task_current", "__rq_clock_broken"} {
					if strings.Contains(f.Message, " "+name+"()") {
						got = append(got, name)
					}
				}
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("UNUSED_INLINE for %v, want %v", got, c.want)
			}
		})
	}
}
