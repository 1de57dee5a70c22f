package linediff

// This file implements xdl_change_compact: sliding groups of changed lines
// to canonical positions, including git's indent heuristic
// (diff.indentHeuristic, on by default since git 2.14).

// Constants of the indent heuristic (xdiff/xdiffi.c).
const (
	maxIndent = 200
	maxBlanks = 20

	startOfFilePenalty              = 1
	endOfFilePenalty                = 21
	totalBlankWeight                = -30
	postBlankWeight                 = 6
	relativeIndentPenalty           = -4
	relativeIndentWithBlankPenalty  = 10
	relativeOutdentPenalty          = 24
	relativeOutdentWithBlankPenalty = 17
	relativeDedentPenalty           = 23
	relativeDedentWithBlankPenalty  = 17

	indentWeight              = 60
	indentHeuristicMaxSliding = 100
)

// group is a run of changed lines [start,end) in one side; start == end
// denotes an empty group sitting before line end.
type group struct {
	start, end int
}

func groupInit(s *side) group {
	g := group{}
	for s.changed(g.end) {
		g.end++
	}
	return g
}

// groupNext moves g to the next group; it reports false at the end.
func groupNext(s *side, g *group) bool {
	if g.end == s.n() {
		return false
	}
	g.start = g.end + 1
	g.end = g.start
	for s.changed(g.end) {
		g.end++
	}
	return true
}

// groupPrevious moves g to the previous group; it reports false at the
// start.
func groupPrevious(s *side, g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	g.start = g.end
	for s.changed(g.start - 1) {
		g.start--
	}
	return true
}

// groupSlideDown shifts g down by one line if the line after it equals its
// first line, merging with a following group; it reports success.
func groupSlideDown(s *side, g *group) bool {
	if g.end < s.n() && s.same(g.start, g.end) {
		s.chg[g.start+1] = 0
		g.start++
		s.chg[g.end+1] = 1
		g.end++
		for s.changed(g.end) {
			g.end++
		}
		return true
	}
	return false
}

// groupSlideUp shifts g up by one line if the line before it equals its
// last line, merging with a preceding group; it reports success.
func groupSlideUp(s *side, g *group) bool {
	if g.start > 0 && s.same(g.start-1, g.end-1) {
		g.start--
		s.chg[g.start+1] = 1
		g.end--
		s.chg[g.end+1] = 0
		for s.changed(g.start - 1) {
			g.start--
		}
		return true
	}
	return false
}

// compact slides the change groups of s (whose counterpart is o) as
// xdl_change_compact does with XDF_INDENT_HEURISTIC.
func compact(s, o *side) {
	g := groupInit(s)
	og := groupInit(o)

	for {
		if g.end != g.start {
			var groupsize, earliestEnd, endMatchingOther int
			for {
				groupsize = g.end - g.start
				endMatchingOther = -1

				// Shift the group backward as much as possible.
				for groupSlideUp(s, &g) {
					if !groupPrevious(o, &og) {
						panic("linediff: group sync broken sliding up")
					}
				}
				earliestEnd = g.end
				if og.end > og.start {
					endMatchingOther = g.end
				}

				// Now shift it forward as far as possible.
				for groupSlideDown(s, &g) {
					if !groupNext(o, &og) {
						panic("linediff: group sync broken sliding down")
					}
					if og.end > og.start {
						endMatchingOther = g.end
					}
				}
				if groupsize == g.end-g.start {
					break
				}
			}

			switch {
			case g.end == earliestEnd:
				// No shifting was possible.
			case endMatchingOther != -1:
				// Line up with the last aligned change of the
				// other side.
				for og.end == og.start {
					if !groupSlideUp(s, &g) {
						panic("linediff: match disappeared")
					}
					if !groupPrevious(o, &og) {
						panic("linediff: group sync broken sliding to match")
					}
				}
			default:
				bestShift := indentHeuristicShift(s, g, groupsize, earliestEnd)
				for g.end > bestShift {
					if !groupSlideUp(s, &g) {
						panic("linediff: best shift unreached")
					}
					if !groupPrevious(o, &og) {
						panic("linediff: group sync broken sliding to blank line")
					}
				}
			}
		}

		if !groupNext(s, &g) {
			break
		}
		if !groupNext(o, &og) {
			panic("linediff: group sync broken moving to next group")
		}
	}
}

// indentHeuristicShift returns the end position, between earliestEnd and
// g.end, at which the group of groupsize lines reads best.
func indentHeuristicShift(s *side, g group, groupsize, earliestEnd int) int {
	shift := earliestEnd
	if g.end-groupsize-1 > shift {
		shift = g.end - groupsize - 1
	}
	if g.end-indentHeuristicMaxSliding > shift {
		shift = g.end - indentHeuristicMaxSliding
	}
	bestShift := -1
	var best splitScore
	for ; shift <= g.end; shift++ {
		var score splitScore
		score.add(measureSplit(s, shift))
		score.add(measureSplit(s, shift-groupsize))
		if bestShift == -1 || score.cmp(best) <= 0 {
			best = score
			bestShift = shift
		}
	}
	return bestShift
}

// isSpace is git's isspace: space, tab, newline and carriage return only.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// getIndent returns the indentation width of line (tabs to multiples of
// 8), capped at maxIndent, or -1 for a line of whitespace only.
func getIndent(line []byte) int {
	ret := 0
	for _, c := range line {
		if !isSpace(c) {
			return ret
		}
		if c == ' ' {
			ret++
		} else if c == '\t' {
			ret += 8 - ret%8
		}
		if ret >= maxIndent {
			return maxIndent
		}
	}
	return -1
}

// splitMeasurement describes the surroundings of a split point.
type splitMeasurement struct {
	endOfFile  bool
	indent     int
	preBlank   int
	preIndent  int
	postBlank  int
	postIndent int
}

// measureSplit measures the split just before line split.
func measureSplit(s *side, split int) splitMeasurement {
	var m splitMeasurement
	n := s.n()
	if split >= n {
		m.endOfFile = true
		m.indent = -1
	} else {
		m.indent = getIndent(s.line(split))
	}

	m.preIndent = -1
	for i := split - 1; i >= 0; i-- {
		m.preIndent = getIndent(s.line(i))
		if m.preIndent != -1 {
			break
		}
		m.preBlank++
		if m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}

	m.postIndent = -1
	for i := split + 1; i < n; i++ {
		m.postIndent = getIndent(s.line(i))
		if m.postIndent != -1 {
			break
		}
		m.postBlank++
		if m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

// splitScore is the badness of a group position; lower is better.
type splitScore struct {
	effectiveIndent int
	penalty         int
}

func (s *splitScore) add(m splitMeasurement) {
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePenalty
	}
	if m.endOfFile {
		s.penalty += endOfFilePenalty
	}

	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank

	s.penalty += totalBlankWeight * totalBlank
	s.penalty += postBlankWeight * postBlank

	indent := m.indent
	if indent == -1 {
		indent = m.postIndent
	}
	anyBlanks := totalBlank != 0

	s.effectiveIndent += indent

	switch {
	case indent == -1, m.preIndent == -1:
	case indent > m.preIndent:
		if anyBlanks {
			s.penalty += relativeIndentWithBlankPenalty
		} else {
			s.penalty += relativeIndentPenalty
		}
	case indent == m.preIndent:
	default:
		if m.postIndent != -1 && m.postIndent > indent {
			if anyBlanks {
				s.penalty += relativeOutdentWithBlankPenalty
			} else {
				s.penalty += relativeOutdentPenalty
			}
		} else {
			if anyBlanks {
				s.penalty += relativeDedentWithBlankPenalty
			} else {
				s.penalty += relativeDedentPenalty
			}
		}
	}
}

// cmp is negative if s is better than t, positive if worse, 0 if equal.
func (s splitScore) cmp(t splitScore) int {
	c := 0
	if s.effectiveIndent > t.effectiveIndent {
		c = 1
	} else if s.effectiveIndent < t.effectiveIndent {
		c = -1
	}
	return indentWeight*c + (s.penalty - t.penalty)
}
