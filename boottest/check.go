package boottest

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"kpatch/plumbing/ktap"
	"kpatch/unwind"
	"kpatch/unwind/symtab"
)

// Status of a case in the report.
type Status string

// The case statuses.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Frame is one trace entry, symbolized.
type Frame struct {
	Addr uint64 `json:"addr"`
	Sym  string `json:"sym"` // "func+0x12" or "?"
}

// String returns the frame as reports print it: address and symbol.
func (f Frame) String() string { return fmt.Sprintf("%#x %s", f.Addr, f.Sym) }

// Mismatch is a trace that differs from the walker or from the expected
// call chain.
type Mismatch struct {
	ID       string   `json:"id"`
	Tracer   string   `json:"tracer"`
	What     string   `json:"what"` // what differs
	Kernel   []Frame  `json:"kernel"`
	Walker   []Frame  `json:"walker"`
	Expected []string `json:"expected,omitempty"`
	Stop     string   `json:"walker_stop"`
}

// CaseResult is the outcome of one case for one task ABI.
type CaseResult struct {
	Mode       string     `json:"mode"` // unwind_x86_64 or unwind_ia32
	Name       string     `json:"name"`
	Status     Status     `json:"status"`
	Reason     string     `json:"reason,omitempty"`
	Traces     int        `json:"traces"` // snapshots checked
	Mismatches []Mismatch `json:"mismatches,omitempty"`
	Bench      string     `json:"bench,omitempty"`
	Info       []string   `json:"info,omitempty"` // the guest's other diagnostics
}

// Analysis is what Check found in a console log.
type Analysis struct {
	Cases    []CaseResult `json:"cases"`
	Problems []string     `json:"problems"` // run-level failures
	// Splats are the kernel's reports on the console (Splats): each
	// fails the case running when it appeared, or the run when it came
	// outside the cases.
	Splats []Splat `json:"splats,omitempty"`
}

// Passed reports whether nothing failed.
func (a *Analysis) Passed() bool {
	if len(a.Problems) > 0 {
		return false
	}
	for _, c := range a.Cases {
		if c.Status == Fail {
			return false
		}
	}
	return true
}

var expectRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`# expect: id=(\d+) bin=(\S+) exact=([01]) chain=(\S+)`)
})

// symbolize names trace entries with the symbols of the program: the first
// entry is where the task was, the others are return addresses, looked up
// inside their call instructions (package symtab's Locate).
func symbolize(s *symtab.Table, ips []uint64) []Frame {
	out := make([]Frame, len(ips))
	for i, ip := range ips {
		loc := symtab.Location{}
		if s != nil {
			loc = s.Locate(ip, i > 0)
		}
		if loc.Func == "" {
			out[i] = Frame{Addr: ip, Sym: "?"}
			continue
		}
		out[i] = Frame{Addr: ip, Sym: fmt.Sprintf("%s+%#x", loc.Func, loc.Offset)}
	}
	return out
}

func funcName(f Frame) string {
	n, _, _ := strings.Cut(f.Sym, "+")
	return n
}

// ExpandChain expands "ku_syscall,rec*3,main" to its function names.
func ExpandChain(chain string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(chain, ",") {
		name, count, ok := strings.Cut(part, "*")
		n := 1
		if ok {
			var err error
			if n, err = strconv.Atoi(count); err != nil || n < 1 {
				return nil, fmt.Errorf("bad chain element %q", part)
			}
		}
		for range n {
			out = append(out, name)
		}
	}
	return out, nil
}

// Check analyses a console log: KTAP results, kernel warnings, and every
// snapshot against the walker and the expected chains. syms maps a mode
// (KTAP subtest name) to the symbols of its program; cases are the case
// names every mode must report. It expects what v11 to v13 do of compat
// tasks (CheckRevision takes a revision's expectations).
func Check(console []byte, syms map[string]*symtab.Table, cases []string, cfg unwind.Config) *Analysis {
	return CheckRevision(console, syms, cases, cfg, Expectations{})
}

// CheckRevision is Check with the expectations of the revision built: with
// CompatRefused, a deferred trace (tracers A to D) delivered to a compat
// task fails its case, as the revision refuses them (the guest program
// checks that every such request returned -EINVAL without a callback).
func CheckRevision(console []byte, syms map[string]*symtab.Table, cases []string, cfg unwind.Config, exp Expectations) *Analysis {
	a := &Analysis{Splats: Splats(console)}
	for _, s := range a.Splats {
		if s.Case == "" {
			a.Problems = append(a.Problems, s.String())
		}
	}
	if !bytes.Contains(console, []byte("kpatch-selftest: done")) {
		a.Problems = append(a.Problems, "the guest never finished (no \"kpatch-selftest: done\" on the console)")
	}
	root, _ := ktap.Parse(bytes.NewReader(console))
	for _, p := range allProblems(root, "") {
		a.Problems = append(a.Problems, "KTAP: "+p)
	}
	for _, m := range Modes {
		sub := root.Find(m.Subtest)
		if sub == nil {
			a.Problems = append(a.Problems, fmt.Sprintf("%s: no results at all (program crashed or never ran)", m.Subtest))
			for _, c := range cases {
				a.Cases = append(a.Cases, CaseResult{Mode: m.Subtest, Name: c, Status: Fail, Reason: "never reported"})
			}
			continue
		}
		if sub.Status != ktap.Pass && sub.Directive != "" {
			a.Problems = append(a.Problems, fmt.Sprintf("%s: %s", m.Subtest, sub.Directive))
		}
		byName := map[string]*ktap.Test{}
		for _, t := range sub.Subtests {
			byName[t.Name] = t
		}
		for _, c := range cases {
			t := byName[c]
			if t == nil {
				a.Cases = append(a.Cases, CaseResult{Mode: m.Subtest, Name: c, Status: Fail, Reason: "never reported"})
				continue
			}
			a.Cases = append(a.Cases, checkTraced(checkCase(m.Subtest, t, syms[m.Subtest], cfg, exp), exp))
		}
	}
	for _, s := range a.Splats {
		if s.Case == "" {
			continue
		}
		found := false
		for i := range a.Cases {
			if a.Cases[i].Mode == s.Mode && a.Cases[i].Name == s.Case {
				a.Cases[i] = fail(a.Cases[i], s.String())
				found = true
			}
		}
		if !found {
			a.Problems = append(a.Problems, s.String())
		}
	}
	return a
}

func allProblems(t *ktap.Test, path string) []string {
	var out []string
	name := path
	if t.Name != "" {
		name = strings.TrimPrefix(path+"."+t.Name, ".")
	}
	for _, p := range t.Problems {
		if name == "" {
			out = append(out, p)
		} else {
			out = append(out, name+": "+p)
		}
	}
	for _, s := range t.Subtests {
		out = append(out, allProblems(s, name)...)
	}
	return out
}

func checkCase(mode string, t *ktap.Test, syms *symtab.Table, cfg unwind.Config, exp Expectations) CaseResult {
	r := CaseResult{Mode: mode, Name: t.Name}
	switch t.Status {
	case ktap.Pass:
		r.Status = Pass
	case ktap.Skip:
		r.Status, r.Reason = Skip, strings.TrimSpace(strings.TrimPrefix(t.Directive, "SKIP"))
	case ktap.Fail:
		r.Status, r.Reason = Fail, "guest: "+guestReason(t)
	default:
		r.Status, r.Reason = Fail, "no result line (crash or timeout)"
	}
	var text strings.Builder
	for _, l := range t.Log {
		text.WriteString(l.Text + "\n")
		d := strings.TrimSpace(l.Text)
		switch {
		case strings.HasPrefix(d, "# bench:"):
			r.Bench = strings.TrimSpace(strings.TrimPrefix(d, "# bench:"))
		case strings.HasPrefix(d, "# case:"), strings.HasPrefix(d, "# expect:"), strings.HasPrefix(d, "# "+t.Name+":"):
		case strings.HasPrefix(d, "# "):
			r.Info = append(r.Info, strings.TrimPrefix(d, "# "))
		}
	}
	snaps, err := unwind.ParseSnapshots(strings.NewReader(text.String()))
	if err != nil {
		return fail(r, "snapshot: "+err.Error())
	}
	byID := map[string][]*unwind.Snapshot{}
	for _, s := range snaps {
		byID[s.Fields["id"]] = append(byID[s.Fields["id"]], s)
	}
	expects := map[string][]string{}
	exact := map[string]bool{}
	for _, l := range t.Log {
		m := expectRE().FindStringSubmatch(l.Text)
		if m == nil {
			continue
		}
		chain, err := ExpandChain(m[4])
		if err != nil {
			return fail(r, fmt.Sprintf("line %d: %v", l.N, err))
		}
		expects[m[1]], exact[m[1]] = chain, m[3] == "1"
		if len(byID[m[1]]) == 0 && r.Status == Pass {
			r = fail(r, fmt.Sprintf("no snapshot for trace id %s", m[1]))
		}
	}
	for _, s := range snaps {
		r.Traces++
		id := s.Fields["id"]
		if tracer := s.Fields["tracer"]; exp.CompatRefused && s.Regs.Compat && tracer != "F" {
			r = fail(r, fmt.Sprintf("trace id=%s: tracer %s got a deferred trace of a compat task, which the revision refuses", id, tracer))
			continue
		}
		if want := mode == "unwind_ia32"; s.Regs.Compat != want {
			r = fail(r, fmt.Sprintf("trace id=%s: a snapshot of a %s task in %s", id, map[bool]string{true: "compat", false: "64-bit"}[s.Regs.Compat], mode))
			continue
		}
		tr, err := cfg.Walk(s.Memory(), s.Regs)
		if err != nil {
			return fail(r, "walker: "+err.Error())
		}
		if exp.CompatUnwind && s.Regs.Compat && tr.Kind != unwind.KindCompatFP {
			r = fail(r, fmt.Sprintf("trace id=%s: the walker walked the compat task as %s, not with 4-byte frames", id, tr.Kind))
			continue
		}
		walker := tr.IPs()
		mm := Mismatch{ID: id, Tracer: s.Fields["tracer"], Kernel: symbolize(syms, s.Kernel), Walker: symbolize(syms, walker), Stop: tr.Stop.String()}
		if !equalU64(s.Kernel, walker) {
			mm.What = fmt.Sprintf("kernel trace (%d entries) differs from the walker's (%d entries) at entry %d",
				len(s.Kernel), len(walker), firstDiff(s.Kernel, walker))
			mm.Expected = expects[id]
			r.Mismatches = append(r.Mismatches, mm)
			r = fail(r, mm.What)
			continue
		}
		want, ok := expects[id]
		if !ok {
			continue
		}
		if msg := compareChain(mm.Kernel, want, exact[id], cfg.MaxEntries); msg != "" {
			mm.What = msg
			mm.Expected = want
			r.Mismatches = append(r.Mismatches, mm)
			r = fail(r, msg)
		}
	}
	return r
}

// checkTraced fails a case that passed without the traces it is there
// for: every case but those of NoTraceCases delivers at least one trace,
// except a deferred request of a compat task where the revision refuses
// them (CompatRefused). So no case passes by refusal where the revision
// unwinds compat tasks.
func checkTraced(r CaseResult, exp Expectations) CaseResult {
	if r.Status != Pass || r.Traces > 0 || NoTraceCases[r.Name] {
		return r
	}
	if r.Mode == "unwind_ia32" && exp.CompatRefused && !SyncCases[r.Name] {
		return r
	}
	why := "passed without a trace"
	if r.Mode == "unwind_ia32" {
		why += ": the revision unwinds compat tasks (no compat-deferral: refused in its walker facts)"
	}
	if len(r.Info) > 0 {
		why += " (guest: " + strings.Join(r.Info, "; ") + ")"
	}
	return fail(r, why)
}

// NoTraceCases are the cases that check what the API returns and get no
// trace (ebusy, kthread_einval) or time it (bench).
var NoTraceCases = map[string]bool{"ebusy": true, "kthread_einval": true, "bench": true}

// SyncCases are the cases whose traces come from unwind_user_faultable()
// called directly (tracer F), which compat tasks get even where their
// deferred requests are refused.
var SyncCases = map[string]bool{"faultable_sync": true, "func_start": true}

func guestReason(t *ktap.Test) string {
	for i := len(t.Log) - 1; i >= 0; i-- {
		s := strings.TrimSpace(t.Log[i].Text)
		if strings.HasPrefix(s, "# "+t.Name+": ") {
			return strings.TrimPrefix(s, "# "+t.Name+": ")
		}
	}
	return "not ok"
}

func fail(r CaseResult, why string) CaseResult {
	if r.Status != Fail {
		r.Status, r.Reason = Fail, why
	} else if !strings.Contains(r.Reason, why) {
		r.Reason += "; " + why
	}
	return r
}

// compareChain checks symbolized kernel frames against the expected
// function names: the expected chain must be a prefix of the trace (all of
// it when exact), except that a trace truncated at max entries only has
// to match as far as it goes.
func compareChain(kernel []Frame, want []string, exact bool, max int) string {
	n := min(len(kernel), len(want))
	for i := 0; i < n; i++ {
		if funcName(kernel[i]) != want[i] {
			return fmt.Sprintf("frame %d is %s, the program called %s", i, kernel[i].Sym, want[i])
		}
	}
	switch {
	case len(kernel) < len(want) && len(kernel) < max:
		return fmt.Sprintf("trace stops after %d frames, the program made a chain of %d", len(kernel), len(want))
	case exact && len(kernel) != len(want):
		return fmt.Sprintf("trace has %d frames, the broken chain must stop it at %d", len(kernel), len(want))
	}
	return ""
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func firstDiff(a, b []uint64) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
