package boottest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"kpatch/spec"
	"kpatch/unwind"
)

// FactsName is the spec's facts template (facts/selftest.tmpl) of what the
// self-test expects of a revision; see Expectations.
const FactsName = "selftest"

// Expectations are what the self-test expects of the kernel a series
// builds, read from the spec's facts after its last patch: the guest's
// driver and programs get them as C macros (Header), the host check as
// they are. Nothing in the harness is keyed by revision numbers.
type Expectations struct {
	Cookie        bool // request-id: cookie (v13 on) rather than timestamp
	Pending, Done int  // request-pending, request-done: unwind_deferred_request()'s 1, 2 (v11..v13) or 1, 1 (v14 on)
	ReservedBits  int  // reserved-bits: mask bits no tracer gets
	// OtherTracers are the tracers the kernel registers itself, each
	// holding a bit of the mask (other-tracers: 6.19's perf registers
	// perf_unwind_work at boot).
	OtherTracers int
	ExtraCases   []string // extra-cases: run by default (faultable_sync with the USED bit)
	// CompatRefused: a compat (32-bit) task's deferred requests fail with
	// -EINVAL and it gets no deferred trace (walker facts: compat-deferral).
	CompatRefused bool
	// CompatUnwind: compat tasks are unwound with 4-byte frames (walker
	// facts: compat-fp); without it a compat stack is walked as 64-bit
	// frames, which only the walker comparison can check.
	CompatUnwind bool
	// FuncStart: at a function's first instruction under a uprobe the
	// kernel takes the return address at the stack pointer (walker
	// facts: function-start, Linux 6.19's ae25884ad749); without it the
	// trace misses the caller (case func_start).
	FuncStart bool
	// NMICurrent: a deferred request from NMI queues its task work with
	// TWA_NMI_CURRENT, which raises an irq_work interrupt (nmi-request:
	// twa-nmi-current, Linux 6.19's a38a64712e74), not with TWA_RESUME
	// (case nmi_current).
	NMICurrent bool
	// MaxEntries is the most entries a trace has (walker facts:
	// max-entries): 511 up to v13, 510 once unwind_completed shares the
	// cache's page.
	MaxEntries int
	// Config is what olddefconfig must give the x86_64 build: the
	// symbols of configs.tmpl's x86_64 line.
	Config map[string]string
}

// ExpectationsOf reads the expectations of r after its last patch.
func ExpectationsOf(r *spec.Revision) (Expectations, error) {
	var e Expectations
	step := len(r.Patches)
	where := fmt.Sprintf("%s after patch %d", r.Name(), step)
	f, err := r.Facts(FactsName, step)
	if err != nil {
		return e, err
	}
	num := func(k string) (int, error) {
		n, err := strconv.Atoi(f[k])
		if err != nil {
			return 0, fmt.Errorf("facts/%s.tmpl for %s: %s: want a number, got %q", FactsName, where, k, f[k])
		}
		return n, nil
	}
	var errs []string
	for k, v := range f {
		switch k {
		case "request-id":
			if v != "cookie" && v != "timestamp" {
				errs = append(errs, fmt.Sprintf("request-id: want cookie or timestamp, got %q", v))
			}
			e.Cookie = v == "cookie"
		case "request-pending":
			if e.Pending, err = num(k); err != nil {
				return e, err
			}
		case "request-done":
			if e.Done, err = num(k); err != nil {
				return e, err
			}
		case "reserved-bits":
			if e.ReservedBits, err = num(k); err != nil {
				return e, err
			}
		case "other-tracers":
			if e.OtherTracers, err = num(k); err != nil {
				return e, err
			}
		case "extra-cases":
			e.ExtraCases = strings.Fields(strings.ReplaceAll(v, ",", " "))
		case "nmi-request":
			if v != "twa-nmi-current" {
				errs = append(errs, fmt.Sprintf("nmi-request: want twa-nmi-current, got %q", v))
			}
			e.NMICurrent = true
		default:
			errs = append(errs, fmt.Sprintf("unknown fact %q", k))
		}
	}
	for _, k := range []string{"request-id", "request-pending", "request-done", "reserved-bits"} {
		if _, ok := f[k]; !ok {
			errs = append(errs, k+" is missing")
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return e, fmt.Errorf("facts/%s.tmpl for %s: %s", FactsName, where, strings.Join(errs, "; "))
	}
	w, err := r.Facts("walker", step)
	if err != nil {
		return e, err
	}
	e.CompatRefused = unwind.RefusesCompatDeferral(w)
	wc, err := unwind.FromFacts(w)
	if err != nil {
		return e, err
	}
	e.MaxEntries = wc.MaxEntries
	_, e.CompatUnwind = w["compat-fp"]
	_, e.FuncStart = w["function-start"]
	c, err := r.Facts("configs", step)
	if err != nil {
		return e, err
	}
	line, ok := c[Arch]
	if !ok {
		return e, fmt.Errorf("facts/configs.tmpl for %s has no %s line: nothing selects the unwinder on x86_64 (a stacked series such as --stack x86 may)", where, Arch)
	}
	e.Config = map[string]string{}
	for _, w := range strings.Fields(line) {
		sym, v, ok := strings.Cut(w, "=")
		if !ok || sym == "" || (v != "y" && v != "n" && v != "m") {
			return e, fmt.Errorf("facts/configs.tmpl for %s: %s: want SYMBOL=y|n|m, got %q", where, Arch, w)
		}
		e.Config[sym] = v
	}
	return e, nil
}

// Runs reports whether case name runs by default.
func (e Expectations) Runs(name string) bool {
	for _, c := range e.ExtraCases {
		if c == name {
			return true
		}
	}
	return false
}

// Header is kpatch_unwind_facts.h, the expectations as C macros for the
// driver and the programs.
func (e Expectations) Header() []byte {
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	return []byte(fmt.Sprintf(`/* SPDX-License-Identifier: GPL-2.0 */
/* Written by kpatch from the spec's facts of the revision built; not part of any series. */
#ifndef KPATCH_UNWIND_FACTS_H
#define KPATCH_UNWIND_FACTS_H
#define KU_COOKIE		%d	/* the request id is a cookie, not a timestamp */
#define KU_REQ_PENDING		%d	/* unwind_deferred_request(): already queued */
#define KU_REQ_DONE		%d	/* unwind_deferred_request(): callback already run */
#define KU_RESERVED_BITS	%d	/* unwind mask bits no tracer gets */
#define KU_OTHER_TRACERS	%d	/* tracers the kernel registers itself (perf) */
#define KU_COMPAT_REFUSED	%d	/* compat tasks' requests fail with -EINVAL */
#define KU_COMPAT_UNWIND	%d	/* compat tasks are unwound with 4-byte frames */
#define KU_MAX_ENTRIES		%d	/* the most entries a trace has */
#define KU_FUNC_START		%d	/* at a function's first instruction the return address is at sp */
#define KU_NMI_CURRENT		%d	/* a request from NMI uses TWA_NMI_CURRENT */
#endif
`, b(e.Cookie), e.Pending, e.Done, e.ReservedBits, e.OtherTracers, b(e.CompatRefused), b(e.CompatUnwind), e.MaxEntries, b(e.FuncStart), b(e.NMICurrent)))
}

// required is Required with the unwinder's symbols the revision's
// configuration facts give.
func (e Expectations) required() map[string]string {
	m := map[string]string{}
	for k, v := range Required {
		m[k] = v
	}
	for k, v := range e.Config {
		m[k] = v
	}
	return m
}
