package verify

import (
	"fmt"

	"kpatch/spec"
)

// SeriesRules is what a series' spec declares for verify (its
// verify-rules file, spec.VerifyRules): the rules of scope series (one
// review's points) that apply to it, and the series' own misspellings.
type SeriesRules struct {
	Source   string            // the file the rules come from
	Rules    map[string]bool   // rule IDs of scope series
	Spelling map[string]string // misspelling (lower case) -> correction
}

// declares reports whether r has rule id; a nil r declares none.
func (r *SeriesRules) declares(id string) bool { return r != nil && r.Rules[id] }

// words returns the series' misspellings; nil for a nil r.
func (r *SeriesRules) words() map[string]string {
	if r == nil {
		return nil
	}
	return r.Spelling
}

// NewSeriesRules checks what a spec declares for verify against the
// rules: each rule it names must be one of scope series (a kernel rule
// applies to every series already).
func NewSeriesRules(d *spec.VerifyRules) (*SeriesRules, error) {
	r := &SeriesRules{Source: d.Source, Rules: map[string]bool{}, Spelling: d.Spelling}
	scope := map[string]Scope{}
	for _, rule := range Rules() {
		scope[rule.ID] = rule.Scope
	}
	for _, l := range d.Rules {
		switch scope[l.ID] {
		case SeriesScope:
			r.Rules[l.ID] = true
		case Kernel:
			return nil, fmt.Errorf("%s:%d: %s applies to every series already: remove the line", d.Source, l.Line, l.ID)
		default:
			return nil, fmt.Errorf("%s:%d: unknown rule %s: kpatch verify --rules lists them", d.Source, l.Line, l.ID)
		}
	}
	return r, nil
}
