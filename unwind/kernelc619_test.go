package unwind

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// Linux 6.19's unwinder in the differential test: kernel/unwind/user.c,
// the unwind headers and arch/x86/include/asm/{unwind_user,uprobes}.h as
// ../shared/revisions/v6.19 holds them (checked by blob id there), and
// is_uprobe_at_func_entry() cut from its arch/x86/kernel/uprobes.c, built
// for user space with testdata/kernelc, against the walker with the
// configuration the x86-6.19 stack's walker facts give (facts619 here).
// The state after patch 12 of the 16 ("Enable frame pointer unwinding on
// x86", before "Teach FP unwind about start of function") is v6.19 with
// patches 15 and 13 taken back out by git apply -R.

// sharedRevisions is ../shared/revisions, found from the working directory
// up; the test fails without it (docs/tests.md).
func sharedRevisions(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "revisions")
		if st, err := os.Stat(filepath.Join(p, "v6.19")); err == nil && st.IsDir() {
			return p
		}
		if dir == filepath.Dir(dir) {
			t.Fatalf("no shared/revisions/v6.19 above %s: the checkout needs shared/ beside it (docs/tests.md)", wd)
			return ""
		}
	}
}

// files619 are the files of the series the harness needs, with x86's
// uprobes.h, as in Linux 6.19.
var files619 = []string{
	"kernel/unwind/user.c",
	"include/linux/unwind_user.h",
	"include/linux/unwind_user_types.h",
	"include/asm-generic/unwind_user.h",
	"arch/x86/include/asm/unwind_user.h",
	"arch/x86/include/asm/uprobes.h",
}

// tree619 returns the files of files619 after patch (12 or 16) of
// ../shared/revisions/x86-6.19.
func tree619(patch int) func(t *testing.T) map[string][]byte {
	return func(t *testing.T) map[string][]byte {
		t.Helper()
		rev := sharedRevisions(t)
		dir := t.TempDir()
		for _, f := range files619 {
			data, err := os.ReadFile(filepath.Join(rev, "v6.19", f))
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if patch < 16 {
			// Take back 0015 and 0013, newest first; 0014 touches
			// none of these files.
			for _, p := range []string{"0015-unwind_user-x86-Fix-arch-um-build.patch", "0013-unwind_user-x86-Teach-FP-unwind-about-start-of-funct.patch"} {
				args := []string{"apply", "-R"}
				for _, f := range files619 {
					args = append(args, "--include="+f)
				}
				cmd := exec.Command("git", append(args, filepath.Join(rev, "x86-6.19", p))...)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git apply -R %s: %v\n%s", p, err, out)
				}
			}
		}
		m := map[string][]byte{}
		for _, f := range files619 {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			m[f] = data
		}
		return m
	}
}

// funcEntryDef is is_uprobe_at_func_entry()'s definition in uprobes.c.
var funcEntryDef = regexp.MustCompile(`(?ms)^bool is_uprobe_at_func_entry\(struct pt_regs \*regs\)\n\{\n.*?^\}\n`)

// funcEntry writes funcentry.c: is_uprobe_at_func_entry() as 6.19's
// arch/x86/kernel/uprobes.c defines it, and the kp_set_uprobe() the
// harness calls to set current->utask->auprobe.
func funcEntry(t *testing.T, dir string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(sharedRevisions(t), "v6.19", "arch/x86/kernel/uprobes.c"))
	if err != nil {
		t.Fatal(err)
	}
	def := funcEntryDef.Find(src)
	if def == nil {
		t.Fatal("no is_uprobe_at_func_entry() in v6.19's arch/x86/kernel/uprobes.c")
	}
	c := `#include <linux/kernel.h>
#include <linux/sched.h>
#include <asm/ptrace.h>
#include <asm/uprobes.h>
#include <asm/ibt.h>

static struct arch_uprobe kp_auprobe;
static struct uprobe_task kp_utask;

void kp_set_uprobe(int on, const unsigned char *insn)
{
	if (!on) {
		kp_current.utask = NULL;
		return;
	}
	memcpy(kp_auprobe.insn, insn, sizeof(kp_auprobe.insn));
	kp_utask.auprobe = &kp_auprobe;
	kp_current.utask = &kp_utask;
}

` + string(def)
	p := filepath.Join(dir, "funcentry.c")
	if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{p}
}

// facts619 are the walker facts of the x86-6.19 stack (on v16) after
// patch 12 of the 16 and from patch 13 on (README of x86-6.19).
func facts619(patch int) map[string]string {
	f := map[string]string{
		"fp":          "x86_64",
		"compat-fp":   "word-size",
		"fp-below-sp": "stop",
		"align":       "word-size",
		"max-entries": "510",
	}
	if patch >= 13 {
		f["function-start"] = "uprobe"
	}
	return f
}

func config619(t testing.TB, patch int, ibt bool) func() Config {
	return func() Config {
		c, err := FromFacts(facts619(patch))
		if err != nil {
			t.Fatal(err)
		}
		c.NoIBT = !ibt
		return c
	}
}

// uprobeInsns are probed instructions: push %rbp, endbr64, endbr32, the
// mov %rsp,%rbp after push (64- and 32-bit encodings), a REX push (push
// %r13), nop.
var uprobeInsns = [][4]byte{
	{0x55, 0x48, 0x89, 0xe5},
	{0xf3, 0x0f, 0x1e, 0xfa},
	{0xf3, 0x0f, 0x1e, 0xfb},
	{0x48, 0x89, 0xe5, 0x90},
	{0x89, 0xe5, 0x83, 0xec},
	{0x41, 0x55, 0x90, 0x90},
	{0x90, 0x55, 0x48, 0x89},
}

func kernelVariants619(t testing.TB) []kernelVariant {
	base := []string{"CONFIG_UNWIND_USER", "CONFIG_HAVE_UNWIND_USER_FP", "CONFIG_X86_64", "CONFIG_COMPAT", "CONFIG_UPROBES"}
	return []kernelVariant{
		{name: "x86-6.19-patch12", rev: 12, defines: base, config: config619(t, 12, true),
			files: tree619(12), extra: funcEntry, uprobes: true},
		{name: "x86-6.19-patch16", rev: 16, defines: append([]string{"CONFIG_X86_KERNEL_IBT"}, base...), config: config619(t, 16, true),
			files: tree619(16), extra: funcEntry, uprobes: true},
		{name: "x86-6.19-patch16-no-ibt", rev: 16, defines: base, config: config619(t, 16, false),
			files: tree619(16), extra: funcEntry, uprobes: true},
	}
}
