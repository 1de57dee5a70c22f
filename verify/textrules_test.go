package verify

import (
	"strings"
	"sync"
	"testing"

	"kpatch/internal/testenv"
	"kpatch/plumbing/kernelsrc"
)

var (
	foreignOnce sync.Map // name -> *foreignEntry
	debianOnce  sync.Once
	debianKT    *kernelsrc.Tree
	debianErr   error
)

type foreignEntry struct {
	once sync.Once
	s    *Series
	fs   []Finding
	err  error
}

// debianBase is the Debian 6.12 tree at v6.12, opened once.
func debianBase(t testing.TB) *kernelsrc.Tree {
	t.Helper()
	dir := debianTree(t)
	debianOnce.Do(func() { debianKT, debianErr = kernelsrc.Open(dir, "v6.12", false) })
	if debianErr != nil {
		t.Fatal(debianErr)
	}
	return debianKT
}

// foreign reads the foreign series name (../shared/foreign-series) on the
// Debian tree and runs verify on it with the kernel rules, once per test
// process.
func foreign(t testing.TB, name string) (*Series, []Finding) {
	t.Helper()
	kt := debianBase(t)
	v, _ := foreignOnce.LoadOrStore(name, &foreignEntry{})
	e := v.(*foreignEntry)
	e.once.Do(func() {
		for _, f := range testenv.ForeignSeries(t) {
			if f.Name == name {
				e.s, e.err = ReadMail(f.Path, kt)
				if e.err == nil {
					e.fs = Run(e.s, Options{})
				}
				return
			}
		}
		t.Fatalf("no foreign series %s", name)
	})
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e.s, e.fs
}

// inPatch returns the findings of fs under id at patch n (0: any).
func inPatch(fs []Finding, id string, n int) []Finding {
	var out []Finding
	for _, f := range only(fs, id) {
		if n == 0 || f.Patch == n {
			out = append(out, f)
		}
	}
	return out
}

// TestMoveOncePerMove: amd-tlb 11 makes arch_tlbbatch_add_pending() out of
// line (from tlbflush.h to tlb.c) and changes 11 lines of its code (and
// 6 of comments, which a move may change), as its
// message says ("queue up asynchronous, targeted flushes from
// arch_tlbbatch_add_pending"): one finding for the one move, a warning
// (MOVE_AND_CHANGE) that names the lines, no MOVE_CHANGES_BODY error.
func TestMoveOncePerMove(t *testing.T) {
	_, fs := foreign(t, "amd-tlb")
	if got := inPatch(fs, "MOVE_CHANGES_BODY", 0); len(got) != 0 {
		t.Errorf("MOVE_CHANGES_BODY on a described change: %v", got)
	}
	got := inPatch(fs, "MOVE_AND_CHANGE", 11)
	if len(got) != 1 || got[0].Severity != Warning || got[0].File != "arch/x86/mm/tlb.c" ||
		!strings.Contains(got[0].Message, "arch_tlbbatch_add_pending() (from arch/x86/include/asm/tlbflush.h)") ||
		!strings.Contains(got[0].Message, "11 lines") {
		t.Errorf("MOVE_AND_CHANGE at amd-tlb 11: %+v", got)
	}
}

// TestCEvalOnlyOnC: crypto-x86 edits assembly (.S): the C rules do not read
// it, so there is no C_EVAL on a .S file; a file cc/v4 cannot read at all
// is reported once, not once per build (amd-tlb 12's msr-index.h edits,
// zram 4's zram_drv.c).
func TestCEvalOnlyOnC(t *testing.T) {
	for _, name := range []string{"crypto-x86", "amd-tlb", "zram", "preempt-lazy"} {
		_, fs := foreign(t, name)
		perFile := map[string]int{}
		for _, f := range only(fs, "C_EVAL") {
			if strings.HasSuffix(f.File, ".S") || strings.HasSuffix(f.File, ".lds.h") {
				t.Errorf("%s: C_EVAL on %s: %s", name, f.File, f.Message)
			}
			if f.Line == 0 {
				perFile[f.File]++
			}
		}
		for file, n := range perFile {
			if n > 1 {
				t.Errorf("%s: %d file-level C_EVAL for %s, want at most one", name, n, file)
			}
		}
	}
}

// TestSPDXForeign: amd-3dvcache 2 adds a Documentation/ABI entry, which
// needs no SPDX line (checkpatch.pl asks none of it).
func TestSPDXForeign(t *testing.T) {
	_, fs := foreign(t, "amd-3dvcache")
	if got := only(fs, "SPDX_LICENSE_TAG"); len(got) != 0 {
		t.Errorf("SPDX_LICENSE_TAG on amd-3dvcache: %v", got)
	}
}

// TestSubjectPrefixWithout: four of clearlinux's patches have subjects
// without a prefix ("pci pme wakeups"): they say nothing about the
// subsystem and are left out of SUBJECT_PREFIX's comparison, neither
// blamed nor the prefix the others are blamed against.
func TestSubjectPrefixWithout(t *testing.T) {
	s, fs := foreign(t, "clearlinux-mbox")
	for _, f := range only(fs, "SUBJECT_PREFIX") {
		if subjectPrefix(s.Patch(f.Patch).Subject) == "" || strings.Contains(f.Message, `from ":"`) {
			t.Errorf("SUBJECT_PREFIX with an empty prefix: patch %d %q: %s", f.Patch, s.Patch(f.Patch).Subject, f.Message)
		}
	}
	// the rule still compares prefixes: amd-tlb's x86/tlb and x86,tlb against x86/mm
	_, tlb := foreign(t, "amd-tlb")
	if n := len(only(tlb, "SUBJECT_PREFIX")); n != 2 {
		t.Errorf("amd-tlb: %d SUBJECT_PREFIX findings, want 2 (patches 8 and 11)", n)
	}
}
