package verify

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"kpatch/verify/cunit"
)

// analyzerRules are the checks of the analyzers of the field on the lines
// a series adds: the type limits Smatch and -Wtype-limits report, and what
// code that may run in NMI may call.
var analyzerRules = []Rule{typeLimitsRule, nmiRule}

var typeLimitsRule = Rule{ID: "TYPE_LIMITS", Severity: Warning,
	Why:   "a comparison that is always true or always false for its operand's type is a check that never fires (unsigned < 0, a u8 compared with 256): W=2's -Wtype-limits and Smatch report it, W=1 builds do not",
	check: checkTypeLimits}

// checkTypeLimits reports the comparisons a patch adds of a variable (a
// parameter or a local of the function) with an integer constant that
// are always true or always false for the variable's type, with C's
// integer promotions and usual arithmetic conversions, in every build
// verify evaluates (x86_64 and i386): "unsigned long bit; ... bit < 0".
// The comparison must be written on the line (not made by a macro's
// expansion), and the type one cc/v4 sizes (the kernel's basic types,
// size_t, u32, ...): where it cannot tell, it says nothing.
func checkTypeLimits(c *checker) {
	for _, p := range c.s.Patches {
		c.stopped()
		for _, f := range p.Files {
			if !isC(f.Path) || len(f.Added) == 0 || f.Deleted {
				continue
			}
			added := map[int]string{}
			for _, l := range f.Added {
				added[l.N] = l.Text
			}
			byLine := map[string][]typeVerdict{} // "line:col name op const" -> the verdict in each build
			var order []string
			for _, e := range cunit.Envs()[:2] {
				u := c.unit(f.Path, p.Number, cunit.After, e)
				if u == nil {
					continue
				}
				for _, fn := range u.Funcs {
					for _, cmp := range fn.Compares {
						text, ok := added[cmp.Line]
						if !ok || !writtenCompare(text, cmp) {
							continue
						}
						typ := cmp.Type // the declaration in scope there
						if typ == "" {
							continue
						}
						k := fmt.Sprintf("%d:%d %s %s %s", cmp.Line, cmp.Col, cmp.Name, cmp.Op, cmp.Const)
						if _, seen := byLine[k]; !seen {
							order = append(order, k)
						}
						byLine[k] = append(byLine[k], c.typeVerdict(p, e, fn, cmp, typ))
					}
				}
			}
			for _, k := range order {
				vs := byLine[k]
				v := vs[0]
				same := v.known
				for _, o := range vs[1:] {
					same = same && o.known && o.always == v.always
				}
				if !same || len(vs) < 2 {
					continue // not in every build, or verify cannot tell
				}
				c.report(p, f.Path, v.cmp.Line, "%s %s %s is always %v: %s is %s (%s), %s; the check never changes",
					v.cmp.Name, v.cmp.Op, v.cmp.Const, v.always, v.cmp.Name, v.typ, v.fn, v.why)
			}
		}
	}
}

// typeVerdict is what a comparison always is in one build.
type typeVerdict struct {
	known, always bool
	cmp           cunit.Compare
	typ, fn, why  string
}

// writtenCompare reports whether the comparison is written on its line as
// the author wrote it: the name, the operator and the constant in a row.
func writtenCompare(line string, cmp cunit.Compare) bool {
	code := string(cunit.CodeOnly([]byte(line)))
	n, o, k := regexp.QuoteMeta(cmp.Name), regexp.QuoteMeta(cmp.Op), regexp.QuoteMeta(cmp.Const)
	fo := regexp.QuoteMeta(flip(cmp.Op))
	kk := strings.Replace(k, `\-`, `-\s*`, 1)
	re := regexp.MustCompile(`\b` + n + `\s*\)?\s*` + o + `\s*\(?\s*` + kk + `\b|(^|[^\w.])` + kk + `\s*\)?\s*` + fo + `\s*\(?\s*` + n + `\b`)
	return re.MatchString(code)
}

func flip(op string) string {
	return map[string]string{"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}[op]
}

// typeVerdict evaluates cmp for typ in build e.
func (c *checker) typeVerdict(p *Patch, e cunit.Env, fn *cunit.Func, cmp cunit.Compare, typ string) typeVerdict {
	v := typeVerdict{cmp: cmp, typ: typ, fn: fn.Name + "()"}
	x, k, ok := c.units.IntTypes(p.Number, e, typ, cmp.Const)
	if !ok {
		return v
	}
	kv, ok := cunit.ConstValue(cmp.Const, k)
	if !ok {
		return v
	}
	always, known := compareAlways(x, k, kv, cmp.Op)
	if !known {
		return v
	}
	v.known, v.always = true, always
	switch {
	case !x.Signed && x.Bits >= 32 && kv.Sign() <= 0:
		v.why = "which is never less than zero"
	default:
		v.why = fmt.Sprintf("whose values are %v to %v", x.Min(), x.Max())
	}
	return v
}

// compareAlways says whether "x op kv" (x of type t, the constant of type
// k with value kv) is always true or always false, after C's integer
// promotion of x and the usual arithmetic conversions; known is false when
// it depends on x.
func compareAlways(t, k cunit.IntType, kv *big.Int, op string) (always, known bool) {
	pt := t
	if pt.Bits < 32 {
		pt = cunit.IntType{Signed: true, Bits: 32} // int holds every value of t
	}
	common := arithmetic(pt, k)
	c := cunit.Convert(kv, common)
	// the values x takes in the common type: one or two intervals
	type span struct{ lo, hi *big.Int }
	var spans []span
	lo, hi := t.Min(), t.Max()
	if common.Signed || lo.Sign() >= 0 {
		spans = []span{{cunit.Convert(lo, common), cunit.Convert(hi, common)}}
	} else { // negative values of a signed x wrap to the top of an unsigned type
		spans = []span{{big.NewInt(0), hi}, {cunit.Convert(lo, common), cunit.Convert(big.NewInt(-1), common)}}
	}
	holds := func(x *big.Int) bool {
		d := x.Cmp(c)
		switch op {
		case "<":
			return d < 0
		case "<=":
			return d <= 0
		case ">":
			return d > 0
		case ">=":
			return d >= 0
		case "==":
			return d == 0
		case "!=":
			return d != 0
		}
		return false
	}
	all, none := true, true
	for _, s := range spans {
		// the operators are thresholds: their value over an interval is
		// decided at its ends, and at c for == and !=
		points := []*big.Int{s.lo, s.hi}
		if c.Cmp(s.lo) >= 0 && c.Cmp(s.hi) <= 0 {
			points = append(points, c)
			if c.Cmp(s.lo) > 0 || c.Cmp(s.hi) < 0 {
				// an interval with c inside and another value beside it
				other := new(big.Int).Add(c, big.NewInt(1))
				if c.Cmp(s.hi) == 0 {
					other.Sub(c, big.NewInt(1))
				}
				points = append(points, other)
			}
		}
		for _, x := range points {
			if holds(x) {
				none = false
			} else {
				all = false
			}
		}
	}
	switch {
	case all:
		return true, true
	case none:
		return false, true
	}
	return false, false
}

// arithmetic is C's usual arithmetic conversion of two promoted integer
// types.
func arithmetic(a, b cunit.IntType) cunit.IntType {
	if a.Signed == b.Signed {
		if a.Bits >= b.Bits {
			return a
		}
		return b
	}
	u, s := a, b
	if a.Signed {
		u, s = b, a
	}
	switch {
	case u.Bits >= s.Bits:
		return u
	case s.Bits > u.Bits:
		return s // the signed type holds every value of the unsigned one
	}
	return cunit.IntType{Signed: false, Bits: s.Bits}
}
