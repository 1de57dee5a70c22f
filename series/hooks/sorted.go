package hooks

import (
	"fmt"
	"sort"
	"strings"
)

// isMaintainersField reports whether l is a MAINTAINERS field line,
// /^[A-Z]:\t/.
func isMaintainersField(l string) bool {
	return len(l) >= 3 && l[0] >= 'A' && l[0] <= 'Z' && l[1] == ':' && l[2] == '\t'
}

// section places a MAINTAINERS section among the sections before THE REST,
// by title, case-insensitively.
func (f lines) section(title string) (int, error) {
	var entries []entry
	end := len(f)
	for i := 1; i+1 < len(f); i++ {
		t := strings.TrimRight(f[i], "\n")
		if strings.TrimSpace(f[i-1]) != "" || t == "" || isMaintainersField(t) || !isMaintainersField(f[i+1]) {
			continue
		}
		if t == "THE REST" {
			end = i
			break
		}
		entries = append(entries, entry{strings.ToUpper(t), i, i})
	}
	if len(entries) == 0 {
		return 0, missing("no MAINTAINERS sections")
	}
	at, dup := placeSorted(entries, strings.ToUpper(title), end)
	if dup >= 0 {
		return 0, atLines(ErrAlreadyPresent, "section at line %s", entries[dup].line)
	}
	return at, nil
}

func (f lines) sortedLine(prefix, text string) (int, error) {
	if !strings.HasPrefix(text, prefix) {
		return 0, fmt.Errorf("the text does not start with %q", prefix)
	}
	key := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(text, "\n", 2)[0], prefix))
	return f.sortedAmong(0, len(f), key, func(l string) (string, bool) {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(strings.TrimPrefix(l, prefix)), true
		}
		return "", false
	})
}

// sortedAmong returns where key goes among the keyed lines of [from, to),
// by placeSorted: before the right neighbour and the comment lines right
// above it ("# ..." or C comments), or after the last keyed line.
func (f lines) sortedAmong(from, to int, key string, keyOf func(string) (string, bool)) (int, error) {
	var entries []entry
	prev := from // the line after the previous entry
	for i := from; i < to; i++ {
		if k, ok := keyOf(f[i]); ok {
			entries = append(entries, entry{k, f.commentsAbove(i, prev), i})
			prev = i + 1
		}
	}
	if len(entries) == 0 {
		return 0, missing("no lines to sort among")
	}
	at, dup := placeSorted(entries, key, prev)
	if dup >= 0 {
		return 0, atLines(ErrAlreadyPresent, "line %s", entries[dup].line)
	}
	return at, nil
}

// entry is one entry of a sorted list: its key, its first line (where an
// entry that sorts right before it goes) and the line that has its key.
type entry struct {
	key         string
	start, line int
}

// placeSorted returns where an entry with key goes in a list that is sorted
// by key, perhaps only in runs: between its alphabetical neighbours, the
// adjacent pair a < key < b nearest to it by name, as a maintainer places an
// entry. Precisely:
//
//   - The list is read with a sentinel before its first entry (less than
//     every key) and one after its last (greater than every key), so at
//     least one adjacent pair brackets key.
//   - Of the pairs that bracket key, the nearest is the one with the fewest
//     entries of the list whose keys sort strictly between a and b (0 when a
//     and b are key's predecessor and successor in the whole list); then the
//     one whose a or b shares the longest prefix with key; then the first in
//     the file.
//   - The entry goes at b's first line, or at end (the line after the list)
//     when b is the sentinel after the last entry.
//
// So in a sorted list key goes before the first greater entry; in a list
// sorted in runs, into the run where its neighbours by name stand, not
// before the first greater entry of an earlier run; and when no two entries
// bracket key (the list descends around it, e.g. "B C A" for "AB"), at the
// start or the end of the list, whichever sentinel pair is nearer. When an
// entry already has key, placeSorted returns its index as dup (else -1).
func placeSorted(entries []entry, key string, end int) (at, dup int) {
	for i, e := range entries {
		if e.key == key {
			return 0, i
		}
	}
	sorted := make([]string, len(entries))
	for i, e := range entries {
		sorted[i] = e.key
	}
	sort.Strings(sorted)
	// between counts the entries whose keys sort strictly between a and b;
	// "" with low/high set stands for a sentinel.
	between := func(a string, aLow bool, b string, bHigh bool) int {
		lo := 0
		if !aLow {
			lo = sort.Search(len(sorted), func(i int) bool { return sorted[i] > a })
		}
		hi := len(sorted)
		if !bHigh {
			hi = sort.SearchStrings(sorted, b)
		}
		return max(hi-lo, 0)
	}
	best, bestWidth, bestPrefix := -1, -1, -1
	for i := 0; i <= len(entries); i++ {
		// The pair (entries[i-1], entries[i]); i == 0 and i == len are
		// the sentinel pairs.
		aLow, bHigh := i == 0, i == len(entries)
		var a, b string
		if !aLow {
			a = entries[i-1].key
		}
		if !bHigh {
			b = entries[i].key
		}
		if (!aLow && a >= key) || (!bHigh && b <= key) {
			continue
		}
		w, p := between(a, aLow, b, bHigh), 0
		if !aLow {
			p = commonPrefix(a, key)
		}
		if !bHigh {
			p = max(p, commonPrefix(b, key))
		}
		if best < 0 || w < bestWidth || w == bestWidth && p > bestPrefix {
			best, bestWidth, bestPrefix = i, w, p
		}
	}
	if best == len(entries) {
		return end, -1
	}
	return entries[best].start, -1
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
