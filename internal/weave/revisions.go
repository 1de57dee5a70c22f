package weave

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Rev is the history of one file in one revision of a series.
type Rev struct {
	Version int
	IDs     []string // the id of the patch at each step: IDs[step-1]
	Folded  []string // the ids of patches folded into those of IDs
	Created int      // the step that creates the file; 0 if the revision lacks it
	States  []string // the content after step Created, Created+1, ... len(IDs)
}

// entry is one line of a weave over revisions, with the steps of each
// revision it is present in: [from, to), to = 0 while it stays.
type entry struct {
	text string
	in   map[int][2]int
}

// Revisions returns one template whose render for revision r.Version after
// step s (Created <= s <= len(IDs)) is r.States[s-Created], for every r.
// Lines that revisions share are written once: each revision's history is
// woven on its own, then the weaves are merged by their longest common
// subsequence, and every line is guarded by the revisions and patches that
// have it ({{if since "id"}}, {{if lt .Version 13}}, and their
// combinations).
func Revisions(revs []Rev) (string, error) {
	var versions []int
	var have []Rev
	for _, r := range revs {
		versions = append(versions, r.Version)
		if r.Created == 0 {
			continue
		}
		if len(r.States) != len(r.IDs)-r.Created+1 {
			return "", fmt.Errorf("v%d: %d states for steps %d to %d", r.Version, len(r.States), r.Created, len(r.IDs))
		}
		for _, c := range r.States {
			if c != "" && !strings.HasSuffix(c, "\n") {
				return "", fmt.Errorf("v%d: a state does not end in a newline: not supported", r.Version)
			}
		}
		have = append(have, r)
	}
	if len(have) == 0 {
		return "", fmt.Errorf("no revision has the file")
	}
	sort.Ints(versions)
	var merged []entry
	for _, r := range have {
		w := weaveLines(r.States)
		var texts []string
		for _, e := range merged {
			texts = append(texts, e.text)
		}
		var wt []string
		for _, l := range w {
			wt = append(wt, l.text)
		}
		span := func(l line) [2]int {
			to := 0
			if l.died >= 0 {
				to = r.Created + l.died
			}
			return [2]int{r.Created + l.born, to}
		}
		var out []entry
		mi, wi := 0, 0
		for _, k := range append(lcs(texts, wt), [2]int{len(texts), len(wt)}) {
			out = append(out, merged[mi:k[0]]...)
			for ; wi < k[1]; wi++ {
				out = append(out, entry{text: w[wi].text, in: map[int][2]int{r.Version: span(w[wi])}})
			}
			if k[0] == len(texts) {
				break
			}
			e := merged[k[0]]
			e.in[r.Version] = span(w[k[1]])
			out = append(out, e)
			mi, wi = k[0]+1, k[1]+1
		}
		merged = out
	}

	byVersion, all := map[int]Rev{}, map[int]Rev{}
	for _, r := range have {
		byVersion[r.Version] = r
	}
	for _, r := range revs {
		all[r.Version] = r
	}
	var b strings.Builder
	if err := writeCreated(&b, versions, byVersion, all); err != nil {
		return "", err
	}
	guard := func(e entry) string {
		conds := map[int]string{}
		for _, v := range versions {
			r, ok := byVersion[v]
			if !ok {
				continue // the revision lacks the file: any text will do
			}
			sp, ok := e.in[v]
			switch {
			case !ok:
				conds[v] = "false"
			case sp[0] <= r.Created && sp[1] == 0:
				conds[v] = ""
			case sp[1] == 0:
				conds[v] = fmt.Sprintf("since %q", r.IDs[sp[0]-1])
			case sp[0] <= r.Created:
				conds[v] = fmt.Sprintf("before %q", r.IDs[sp[1]-1])
			default:
				conds[v] = fmt.Sprintf("between %q %q", r.IDs[sp[0]-1], r.IDs[sp[1]-1])
			}
		}
		// A revision without the line whose patches never satisfy the
		// other revisions' conditions (since or between a patch it does
		// not have) does not matter either: those conditions are false
		// there already. So a patch that a later series stacks on a
		// revision keeps its lines for that revision.
		for v, c := range conds {
			if c != "false" {
				continue
			}
			has := map[string]bool{}
			for _, id := range append(append([]string{}, all[v].IDs...), all[v].Folded...) {
				has[id] = true
			}
			never := true
			for w, d := range conds {
				if w == v || d == "false" {
					continue
				}
				first, ok := firstID(d)
				if !ok || has[first] {
					never = false
					break
				}
			}
			if never {
				delete(conds, v)
			}
		}
		return combine(versions, conds)
	}
	for i := 0; i < len(merged); {
		g := guard(merged[i])
		j := i + 1
		for j < len(merged) && guard(merged[j]) == g {
			j++
		}
		if g != "" {
			fmt.Fprintf(&b, "{{if %s}}\n", g)
		}
		for _, e := range merged[i:j] {
			b.WriteString(strings.ReplaceAll(e.text, "{{", "{{\"{{\"}}"))
		}
		if g != "" {
			b.WriteString("{{end}}\n")
		}
		i = j
	}
	return b.String(), nil
}

// writeCreated writes the {{created}} line, guarded by revision where the
// revisions create the file in different patches. A revision that lacks the
// file is given the id of a patch it does not have.
func writeCreated(b *strings.Builder, versions []int, byVersion, all map[int]Rev) error {
	ids := map[int]string{}
	for _, v := range versions {
		if r, ok := byVersion[v]; ok {
			ids[v] = r.IDs[r.Created-1]
		}
	}
	for _, v := range versions {
		if _, ok := ids[v]; ok {
			continue
		}
		lacks := map[string]bool{}
		for _, x := range all[v].IDs {
			lacks[x] = true
		}
		for _, w := range versions {
			if id, ok := ids[w]; ok && byVersion[w].Created > 0 && !lacks[id] {
				ids[v] = id
				break
			}
		}
		if ids[v] == "" {
			return fmt.Errorf("v%d lacks the file but has every patch that creates it in another revision", v)
		}
	}
	groups := map[string][]int{}
	var order []string
	for _, v := range versions {
		id := ids[v]
		if groups[id] == nil {
			order = append(order, id)
		}
		groups[id] = append(groups[id], v)
	}
	if len(order) == 1 {
		fmt.Fprintf(b, "{{created %q}}\n", order[0])
		return nil
	}
	for i, id := range order {
		switch {
		case i == 0:
			fmt.Fprintf(b, "{{if %s}}\n", versionSet(versions, groups[id]))
		case i == len(order)-1:
			b.WriteString("{{else}}\n")
		default:
			fmt.Fprintf(b, "{{else if %s}}\n", versionSet(versions, groups[id]))
		}
		fmt.Fprintf(b, "{{created %q}}\n", id)
	}
	b.WriteString("{{end}}\n")
	return nil
}

// combine writes the guard that holds, in revision v, where conds[v] holds
// ("" always, "false" never); revisions missing from conds do not matter.
func combine(versions []int, conds map[int]string) string {
	var order []string
	groups := map[string][]int{}
	for _, v := range versions {
		c, ok := conds[v]
		if !ok {
			continue
		}
		if groups[c] == nil {
			order = append(order, c)
		}
		groups[c] = append(groups[c], v)
	}
	if len(order) == 1 {
		return order[0]
	}
	// Revisions that lack the file do not matter: the sets are named
	// against those that have it, so that a test needs no exception for them.
	var relevant []int
	for _, v := range versions {
		if _, ok := conds[v]; ok {
			relevant = append(relevant, v)
		}
	}
	var terms []string
	for _, c := range order {
		if c == "false" {
			continue
		}
		set := versionSet(relevant, groups[c])
		switch {
		case c == "":
			terms = append(terms, set)
		default:
			terms = append(terms, fmt.Sprintf("and %s (%s)", paren(set), c))
		}
	}
	if len(terms) == 1 {
		return terms[0]
	}
	return "or " + strings.Join(parenAll(terms), " ")
}

// versionSet writes a test of .Version true for the versions in set, out of
// all.
func versionSet(all, set []int) string {
	in := map[int]bool{}
	for _, v := range set {
		in[v] = true
	}
	var runs [][2]int // index ranges into all
	for i := 0; i < len(all); i++ {
		if !in[all[i]] {
			continue
		}
		j := i
		for j+1 < len(all) && in[all[j+1]] {
			j++
		}
		runs = append(runs, [2]int{i, j})
		i = j
	}
	var parts []string
	for _, r := range runs {
		lo, hi := all[r[0]], all[r[1]]
		// A run that reaches the newest revision is open-ended, so that
		// a revision started from it renders as it does.
		switch {
		case r[0] == 0 && r[1] == len(all)-1:
			return "true"
		case r[1] == len(all)-1:
			parts = append(parts, fmt.Sprintf("ge .Version %d", lo))
		case r[0] == r[1]:
			parts = append(parts, fmt.Sprintf("eq .Version %d", lo))
		case r[0] == 0:
			parts = append(parts, fmt.Sprintf("lt .Version %d", all[r[1]+1]))
		default:
			parts = append(parts, fmt.Sprintf("and (ge .Version %d) (le .Version %d)", lo, hi))
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "or " + strings.Join(parenAll(parts), " ")
}

func paren(s string) string {
	if strings.Contains(s, " ") {
		return "(" + s + ")"
	}
	return s
}

func parenAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = paren(s)
	}
	return out
}

// firstID returns the patch a since or between condition starts at.
func firstID(cond string) (string, bool) {
	var id string
	for _, prefix := range []string{"since ", "between "} {
		if rest, ok := strings.CutPrefix(cond, prefix); ok {
			if _, err := fmt.Sscanf(rest, "%q", &id); err == nil {
				return id, true
			}
		}
	}
	return "", false
}

// RevisionDirs is a repeatable N=DIR command-line flag (flag.Value): a
// directory for each revision N, as the reweave and remessage tools take
// the posted revisions' patches.
type RevisionDirs map[int]string

// String returns the flag's value as flag.Value wants it.
func (p RevisionDirs) String() string { return fmt.Sprint(map[int]string(p)) }

// Set adds one N=DIR.
func (p RevisionDirs) Set(s string) error {
	v, dir, ok := strings.Cut(s, "=")
	n, err := strconv.Atoi(v)
	if !ok || err != nil {
		return fmt.Errorf("want N=DIR, got %q", s)
	}
	p[n] = dir
	return nil
}
