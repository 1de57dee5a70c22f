package unwind

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"kpatch/spec"
	"kpatch/templates/linux"
)

// WalkerFacts is the name of the spec's facts template (facts/walker.tmpl)
// that says what the user unwinder of an x86_64 kernel does after a patch.
const WalkerFacts = "walker"

// X86_64 returns the configuration of an x86_64 kernel (with
// CONFIG_IA32_EMULATION) on which patches 1 to patch of revision version
// of the built-in series are applied (version 0: the newest). A patch
// number the revision lacks is an error; a kernel whose architecture does
// not select HAVE_UNWIND_USER_FP yet gives ErrNoUnwinder.
func X86_64(version, patch int) (Config, error) {
	sp, err := spec.Load(linux.FS)
	if err != nil {
		return Config{}, err
	}
	r, err := sp.Revision(version)
	if err != nil {
		return Config{}, err
	}
	return X86_64At(r, patch)
}

// X86_64At is X86_64 for a revision of any spec.
func X86_64At(r *spec.Revision, patch int) (Config, error) {
	if patch < 1 || patch > len(r.Patches) {
		return Config{}, fmt.Errorf("v%d has patches 1 to %d, not %d", r.Version, len(r.Patches), patch)
	}
	facts, err := r.Facts(WalkerFacts, patch)
	if err != nil {
		return Config{}, err
	}
	c, err := FromFacts(facts)
	if err != nil {
		return Config{}, fmt.Errorf("v%d patch %d (%s): %w", r.Version, patch, r.Patches[patch-1].ID, err)
	}
	if c.FP == nil {
		return c, fmt.Errorf("%w: x86_64 does not select HAVE_UNWIND_USER_FP after patch %d of v%d", ErrNoUnwinder, patch, r.Version)
	}
	return c, nil
}

// FromFacts builds the configuration of an x86_64 kernel from the facts a
// spec gives for it:
//
//	fp: x86_64            HAVE_UNWIND_USER_FP with FrameX86_64 (else no unwinder)
//	compat-fp: x86        HAVE_UNWIND_USER_COMPAT_FP with FrameX86Compat
//	compat-fp: word-size  Linux 6.19 (c79dd946e370): no compat type; the frame is
//	                      ARCH_INIT_USER_FP_FRAME(ws) with the task's word size,
//	                      4 for a compat task: FrameX86Compat, 4-byte reads
//	segment-bases: yes    the x86 compat segment-base hooks
//	next-stub: yes        unwind_user_next() is a stub (Config.NextStub)
//	max-entries: N        unwind_user_faultable()'s limit, or cache-page: CacheEntries(8)
//	fp-below-sp: stop     a frame pointer below the stack pointer ends the walk
//	align: ra | cfa | word-size
//	                      the walk ends at a return address slot (ra) or CFA (cfa)
//	                      that is not aligned to sizeof(long), or at a CFA that is
//	                      not aligned to the walk's word size (word-size, 6.19)
//	function-start: uprobe  Linux 6.19's start-of-function rule (ae25884ad749,
//	                      Config.FuncStart): a walk made in a uprobe handler at
//	                      push %bp (or ENDBR, 64-bit) takes the return address
//	                      at the stack pointer
//	compat-deferral: refused   deferred requests of compat tasks fail (not the walker's)
//
// compat-fp: word-size goes with align: word-size and without
// segment-bases (6.19 has neither sizeof(long) alignment of compat frames
// nor segment bases); FromFacts refuses the mixtures no kernel had.
// An unknown key or value is an error, so that a spec cannot say what the
// walker does not model.
func FromFacts(facts map[string]string) (Config, error) {
	c := Config{LongSize: 8, UserMax: TaskSizeMaxX86_64}
	var errs []error
	for k, v := range facts {
		bad := false
		switch k {
		case "fp":
			c.FP, bad = &FrameX86_64, v != "x86_64"
		case "compat-fp":
			c.CompatFP, bad = &FrameX86Compat, v != "x86" && v != "word-size"
		case "segment-bases":
			c.SegmentBases, bad = true, v != "yes"
		case "next-stub":
			c.NextStub, bad = true, v != "yes"
		case "max-entries":
			if v == "cache-page" {
				c.MaxEntries = CacheEntries(c.LongSize)
			} else {
				n, err := strconv.Atoi(v)
				c.MaxEntries, bad = n, err != nil || n <= 0
			}
		case "fp-below-sp":
			c.StopFPBelowSP, bad = true, v != "stop"
		case "align":
			c.Align, bad = v, v != "ra" && v != "cfa" && v != "word-size"
		case "function-start":
			c.FuncStart, bad = true, v != "uprobe"
		case "compat-deferral":
			bad = v != "refused"
		default:
			errs = append(errs, fmt.Errorf("unknown walker fact %q", k))
			continue
		}
		if bad {
			errs = append(errs, fmt.Errorf("walker fact %s: unknown value %q", k, v))
		}
	}
	if facts["compat-fp"] == "word-size" {
		if _, ok := facts["segment-bases"]; ok {
			errs = append(errs, errors.New("walker facts compat-fp: word-size and segment-bases: no kernel has both (6.19 adds no segment bases)"))
		}
		if a := facts["align"]; a != "" && a != "word-size" {
			errs = append(errs, fmt.Errorf("walker facts compat-fp: word-size and align: %s: no kernel has both (6.19 aligns to the word size: align: word-size)", a))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("%w", err)
	}
	return c, nil
}

// CacheEntries is the number of entries unwind_user_faultable() lets a
// trace have once the unwind cache exists, for a kernel whose sizeof(long)
// is longSize: as many as fit, after the struct unwind_cache header (an
// unsigned int padded to the alignment of long), in a 4096-byte
// allocation: 511 on x86_64, 1023 with 4-byte longs.
func CacheEntries(longSize int) int {
	header := (4 + longSize - 1) / longSize * longSize
	return (4096 - header) / longSize
}

// RefusesCompatDeferral reports whether the facts say that deferred
// requests of compat tasks fail (from v14's x86-compat-defer on).
func RefusesCompatDeferral(facts map[string]string) bool {
	return strings.TrimSpace(facts["compat-deferral"]) == "refused"
}
