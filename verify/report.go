package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Report is the result of verifying a series.
type Report struct {
	Source   string    `json:"source"`
	Patches  int       `json:"patches"`
	Errors   int       `json:"errors"`
	Warnings int       `json:"warnings"`
	Findings []Finding `json:"findings"`
}

// NewReport counts the findings of s.
func NewReport(s *Series, fs []Finding) *Report {
	r := &Report{Source: s.Source, Patches: len(s.Patches), Findings: fs}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for _, f := range fs {
		if f.Severity == Error {
			r.Errors++
		} else {
			r.Warnings++
		}
	}
	return r
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the findings grouped by patch, the reason of each rule
// the first time it appears, and a summary line.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	explained := map[string]bool{}
	last := -1
	width := len(fmt.Sprint(r.Patches))
	for _, f := range r.Findings {
		if f.Patch != last {
			if last != -1 {
				b.WriteString("\n")
			}
			if f.Patch == 0 {
				b.WriteString("series\n")
			} else {
				fmt.Fprintf(&b, "patch %0*d/%d %s\n", width, f.Patch, r.Patches, f.Subject)
			}
			last = f.Patch
		}
		src := ""
		if f.Source != "" && f.Source != "verify" {
			src = " (" + f.Source + ")"
		}
		where := f.Where()
		if where != "" {
			where += ": "
		}
		fmt.Fprintf(&b, "  %-7s %s%s: %s%s\n", f.Severity, f.ID, src, where, f.Message)
		if !explained[f.ID] && f.Why != "" {
			fmt.Fprintf(&b, "          why: %s\n", f.Why)
			explained[f.ID] = true
		}
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s: %d patches, %d errors, %d warnings%s\n", r.Source, r.Patches, r.Errors, r.Warnings, r.byID())
	_, err := io.WriteString(w, b.String())
	return err
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
