package series

import (
	"kpatch/series/hooks"
	"kpatch/spec"
)

// inBase reports whether patch p may change nothing: it has edits, and
// every one is a stable edit (hooks.Stable), which leaves a base that
// carries the fix as it is. A patch whose templates change nothing, or
// whose edits are not all stable, is still refused.
func inBase(p *spec.Patch) bool {
	if len(p.Edits) == 0 {
		return false
	}
	for _, e := range p.Edits {
		if !hooks.Stable(e.Op) {
			return false
		}
	}
	return true
}
