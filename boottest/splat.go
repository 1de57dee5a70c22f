package boottest

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Splat is a report of the kernel's own checks on the console: a BUG, a
// WARNING, a lockdep or KASAN report, an oops or a panic.
type Splat struct {
	Line  int    `json:"line"`  // console line of its title, 1-based
	Kind  string `json:"kind"`  // "KASAN", "lockdep", "BUG", "WARNING", "oops", "panic", "stack dump"
	Title string `json:"title"` // the title line, without the timestamp
	// Mode and Case are the KTAP subtest and case that were running when
	// it appeared ("" before the first case or between two).
	Mode string `json:"mode,omitempty"`
	Case string `json:"case,omitempty"`
}

// String says what it is and where: "KASAN report during unwind_x86_64
// depth_1 (console line 120): BUG: KASAN: stack-out-of-bounds in ...".
func (s Splat) String() string {
	where := "outside the cases"
	if s.Case != "" {
		where = "during " + s.Mode + " " + s.Case
	}
	return fmt.Sprintf("%s report %s (console line %d): %s", s.Kind, where, s.Line, s.Title)
}

var (
	// timestampRE is printk's time prefix.
	timestampRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[\s*\d+\.\d+\]\s?`) })
	subtestRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*# Subtest: (\S+)`) })
	caseStartRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*# case: (\S+)`) })
	resultRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(?:not )?ok \d+ (\S+)`) })
	// A splat's title: what the kernel prints first. Lockdep and RCU's
	// reports are "WARNING: <what>" without WARN()'s "CPU: N PID: N".
	splatRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(BUG: KASAN: |BUG: |kernel BUG at |WARNING: CPU: \d+ PID: |WARNING: |Oops: |Oops|general protection fault|Kernel panic - |stack segment: |invalid opcode: |Call Trace:)`)
	})
)

// splatKind classifies a title line.
func splatKind(title string) string {
	switch {
	case strings.HasPrefix(title, "BUG: KASAN: "):
		return "KASAN"
	case strings.HasPrefix(title, "WARNING: CPU: "):
		return "WARNING"
	case strings.HasPrefix(title, "WARNING: "):
		return "lockdep"
	case strings.HasPrefix(title, "BUG: "), strings.HasPrefix(title, "kernel BUG at "):
		return "BUG"
	case strings.HasPrefix(title, "Kernel panic - "):
		return "panic"
	case strings.HasPrefix(title, "Call Trace:"):
		return "stack dump"
	}
	return "oops"
}

// Splats finds the kernel's reports on a console and the case running
// when each appeared. A report is counted once, at its title: the lines
// that follow (the registers, the call trace, lockdep's held locks) up to
// the next case boundary belong to it, so a "Call Trace:" counts alone
// only when no title came before it in the same case.
func Splats(console []byte) []Splat {
	var out []Splat
	mode, cur := "", ""
	inSplat := false // a title seen since the last case boundary
	for i, raw := range strings.Split(string(console), "\n") {
		l := strings.TrimRight(timestampRE().ReplaceAllString(raw, ""), "\r")
		if m := subtestRE().FindStringSubmatch(l); m != nil {
			mode, cur, inSplat = m[1], "", false
			continue
		}
		if m := caseStartRE().FindStringSubmatch(l); m != nil {
			cur, inSplat = m[1], false
			continue
		}
		if m := resultRE().FindStringSubmatch(l); m != nil && cur != "" && m[1] == cur {
			cur, inSplat = "", false
			continue
		}
		// Anywhere in the line: another writer may have begun it.
		at := splatRE().FindStringIndex(l)
		if at == nil {
			continue
		}
		l = l[at[0]:]
		kind := splatKind(l)
		if inSplat && (kind == "stack dump" || kind == "oops" && !strings.HasPrefix(l, "Oops")) {
			continue
		}
		if kind == "lockdep" && inSplat {
			continue // lockdep's second WARNING line of one report
		}
		inSplat = true
		s := Splat{Line: i + 1, Kind: kind, Title: strings.TrimSpace(l)}
		if cur != "" {
			s.Mode, s.Case = mode, cur
		}
		out = append(out, s)
	}
	return out
}
