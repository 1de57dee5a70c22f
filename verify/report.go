package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Report is the result of verifying a series.
type Report struct {
	Source  string `json:"source"`
	Patches int    `json:"patches"`
	// Of is the number of patches of the series as posted (M of "N/M"):
	// more than Patches when a mail could not be read.
	Of       int            `json:"of"`
	Errors   int            `json:"errors"`
	Warnings int            `json:"warnings"`
	PerPatch []PatchSummary `json:"per_patch"`
	Findings []Finding      `json:"findings"`
	// Notes say how verify read the series: where the C rules took the
	// kernel headers from, which word lists SPELLING used.
	Notes []string `json:"notes"`
	// CRead says, per C file, how the C rules read it: from the
	// preprocessed unit of a kernel build tree, or with verify's prelude
	// (and why).
	CRead []CRead `json:"c_read,omitempty"`
}

// PatchSummary counts the findings of one patch (0: the series as a whole).
type PatchSummary struct {
	Patch int `json:"patch"`
	// Position is the patch's N of "N/M" as posted (Patch counts the
	// patches verify read).
	Position int    `json:"position,omitempty"`
	Subject  string `json:"subject,omitempty"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
}

// NewReport counts the findings of s, in all and per patch.
func NewReport(s *Series, fs []Finding) *Report {
	r := &Report{Source: s.Source, Patches: len(s.Patches), Of: max(s.total, len(s.Patches)), Findings: fs}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	per := make([]PatchSummary, len(s.Patches)+1)
	for i, p := range s.Patches {
		pos := p.Posted
		if pos == 0 || s.total == 0 {
			pos = i + 1
		}
		per[i+1] = PatchSummary{Patch: i + 1, Position: pos, Subject: p.Subject}
	}
	for _, f := range fs {
		sum := &per[0]
		if f.Patch >= 1 && f.Patch < len(per) {
			sum = &per[f.Patch]
		}
		if f.Severity == Error {
			r.Errors++
			sum.Errors++
		} else {
			r.Warnings++
			sum.Warnings++
		}
	}
	if per[0].Errors+per[0].Warnings == 0 {
		per = per[1:]
	}
	r.PerPatch = per
	ri := s.cRead.Load()
	r.Notes = append(ri.notes(), "spelling: "+s.SpellingSources())
	if ri != nil {
		r.CRead = ri.files
	}
	return r
}

// WriteJSON writes the report as indented JSON: every finding on its own.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "Name <addr>" as the mail has it, not \u003c
	return enc.Encode(r)
}

// WriteText writes, for every patch, a heading with its counts and one line
// per finding; findings of one rule with one message in one file are
// folded into one line that lists their lines. A summary line ends it.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	width := len(strconv.Itoa(max(r.Of, r.Patches)))
	byPatch := map[int][]Finding{}
	for _, f := range r.Findings {
		byPatch[f.Patch] = append(byPatch[f.Patch], f)
	}
	for _, sum := range r.PerPatch {
		if sum.Patch == 0 {
			b.WriteString("series")
		} else {
			pos, of := sum.Position, max(r.Of, r.Patches)
			if pos == 0 {
				pos = sum.Patch
			}
			fmt.Fprintf(&b, "patch %0*d/%d %s", width, pos, of, sum.Subject)
		}
		fmt.Fprintf(&b, ": %s\n", counts(sum.Errors, sum.Warnings))
		for _, line := range foldedLines(byPatch[sum.Patch]) {
			b.WriteString("  " + line + "\n")
		}
	}
	for _, n := range r.Notes {
		b.WriteString("note: " + n + "\n")
	}
	if len(r.Findings) > 0 {
		b.WriteString("why each rule exists: kpatch verify --rules\n")
	}
	read := fmt.Sprintf("%d patches", r.Patches)
	if r.Of > r.Patches {
		read = fmt.Sprintf("%d of %d patches read", r.Patches, r.Of)
	}
	fmt.Fprintf(&b, "%s: %s, %d errors, %d warnings%s\n", r.Source, read, r.Errors, r.Warnings, r.byID())
	_, err := io.WriteString(w, b.String())
	return err
}

// counts prints "ok", or "2 errors, 1 warning".
func counts(errors, warnings int) string {
	if errors+warnings == 0 {
		return "ok"
	}
	plural := func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return fmt.Sprintf("%d %ss", n, what)
	}
	return plural(errors, "error") + ", " + plural(warnings, "warning")
}

// foldedLines prints the findings of one patch, one line each, a rule's
// repeats of one message in one file folded into one line.
func foldedLines(fs []Finding) []string {
	type key struct {
		id, source, file, msg string
		sev                   Severity
	}
	var order []key
	lines := map[key][]int{}
	for _, f := range fs {
		k := key{f.ID, f.Source, f.File, f.Message, f.Severity}
		if _, ok := lines[k]; !ok {
			order = append(order, k)
		}
		lines[k] = append(lines[k], f.Line)
	}
	var out []string
	for _, k := range order {
		src := ""
		if k.source != "" && k.source != "verify" {
			src = " (" + k.source + ")"
		}
		where := k.file
		var ls []string
		for _, l := range lines[k] {
			if l > 0 {
				ls = append(ls, strconv.Itoa(l))
			}
		}
		if len(ls) > 0 {
			where += ":" + strings.Join(ls, ",")
		}
		if where != "" {
			where += ": "
		}
		times := ""
		if n := len(lines[k]); n > 1 {
			times = fmt.Sprintf(" (%d times)", n)
		}
		out = append(out, fmt.Sprintf("%-7s %s%s: %s%s%s", k.sev, k.id, src, where, k.msg, times))
	}
	return out
}

// byID summarizes the counts per ID: " (CO_DEVELOPED_BY 2, SPELLING 9)".
func (r *Report) byID() string {
	n := map[string]int{}
	for _, f := range r.Findings {
		n[f.ID]++
	}
	if len(n) == 0 {
		return ""
	}
	var ids []string
	for id := range n {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var parts []string
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf("%s %d", id, n[id]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
