package rangediff

import (
	"fmt"
	"regexp"
	"strings"

	"kpatch/plumbing/linediff"
)

// Patch is one patch of a series as range-diff sees it.
type Patch struct {
	Commit  string // the commit id shown in the pair line (abbreviated as the caller wants)
	Author  string // "Name <address>"
	Message string // the commit message: subject, blank line, body
	Diff    string // the patch's diff, from the first "diff --git" line on
}

// Subject returns the first paragraph of the message on one line, as git's
// --pretty=oneline shows it.
func (p Patch) Subject() string {
	para, _, _ := strings.Cut(strings.TrimLeft(p.Message, "\n"), "\n\n")
	return strings.Join(strings.Fields(para), " ")
}

// DefaultCreationFactor is git range-diff's --creation-factor default.
const DefaultCreationFactor = 60

// costMax is git's COST_MAX: the cost of a forbidden pairing.
const costMax = 1 << 16

// prepared is a patch in range-diff's form.
type prepared struct {
	Patch
	text     string // metadata, commit message and diff
	diff     string // the diff part of text
	diffsize int    // lines in the diff part
	matching int    // index in the other series, -1 if none
	shown    bool
}

var (
	hunkRE   = regexp.MustCompile(`^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@(.*)$`)
	modeRE   = regexp.MustCompile(`^(old|new) mode (\d+)$`)
	renameRE = regexp.MustCompile(`^rename (from|to) (.*)$`)
)

// prepare renders a patch as git range-diff's read_patches does from the
// output of git log -p --no-prefix with its own output indicators.
func prepare(p Patch) *prepared {
	var b strings.Builder
	b.WriteString(" ## Metadata ##\nAuthor: " + p.Author + "\n\n ## Commit message ##\n")
	for _, l := range strings.Split(strings.TrimRight(strings.TrimLeft(p.Message, "\n"), "\n"), "\n") {
		l = strings.TrimRightFunc("    "+l, isSpace)
		b.WriteString(l + "\n")
	}
	pr := &prepared{Patch: p, matching: -1}
	diffOffset := -1
	lines := strings.SplitAfter(p.Diff, "\n")
	cur := ""
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSuffix(lines[i], "\n")
		if strings.HasPrefix(l, "diff --git ") {
			b.WriteString("\n")
			if diffOffset < 0 {
				diffOffset = b.Len()
			}
			// The extended header, up to the first hunk or the next file.
			var oldName, newName, oldMode, newMode, renFrom, renTo string
			isNew, isDel := false, false
			j := i + 1
			for ; j < len(lines); j++ {
				h := strings.TrimSuffix(lines[j], "\n")
				if strings.HasPrefix(h, "@@ ") || strings.HasPrefix(h, "diff --git ") {
					break
				}
				switch {
				case strings.HasPrefix(h, "new file mode "):
					isNew = true
				case strings.HasPrefix(h, "deleted file mode "):
					isDel = true
				case strings.HasPrefix(h, "--- "):
					oldName = stripPrefix(strings.TrimPrefix(h, "--- "), "a/")
				case strings.HasPrefix(h, "+++ "):
					newName = stripPrefix(strings.TrimPrefix(h, "+++ "), "b/")
				default:
					if m := modeRE.FindStringSubmatch(h); m != nil {
						if m[1] == "old" {
							oldMode = m[2]
						} else {
							newMode = m[2]
						}
					} else if m := renameRE.FindStringSubmatch(h); m != nil {
						if m[1] == "from" {
							renFrom = m[2]
						} else {
							renTo = m[2]
						}
					}
				}
			}
			if oldName == "" || oldName == "/dev/null" {
				oldName = renFrom
			}
			if newName == "" || newName == "/dev/null" {
				newName = renTo
			}
			if oldName == "" || newName == "" {
				a, c := gitDiffNames(l)
				if oldName == "" {
					oldName = a
				}
				if newName == "" {
					newName = c
				}
			}
			b.WriteString(" ## ")
			switch {
			case isNew:
				b.WriteString(newName + " (new)")
				cur = newName
			case isDel:
				b.WriteString(oldName + " (deleted)")
				cur = oldName
			case oldName != newName:
				b.WriteString(oldName + " => " + newName)
				cur = newName
			default:
				b.WriteString(newName)
				cur = newName
			}
			if oldMode != "" && newMode != "" && oldMode != newMode {
				fmt.Fprintf(&b, " (mode change %06s => %06s)", oldMode, newMode)
			}
			b.WriteString(" ##\n")
			pr.diffsize++
			i = j - 1
			continue
		}
		if diffOffset < 0 {
			continue // before the first file: not part of a diff
		}
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "@@ "):
			fn := ""
			if m := hunkRE.FindStringSubmatch(l); m != nil {
				fn = m[1]
			} else if k := strings.Index(l[3:], "@@"); k >= 0 {
				fn = l[3+k+2:]
			}
			b.WriteString("@@")
			if cur != "" && fn != "" {
				b.WriteString(" " + cur + ":")
			}
			b.WriteString(fn + "\n")
		case l[0] == '+' || l[0] == '-' || l[0] == ' ':
			b.WriteString(l + "\n")
		default:
			b.WriteString(" " + l + "\n")
		}
		pr.diffsize++
	}
	pr.text = b.String()
	if diffOffset >= 0 {
		pr.diff = pr.text[diffOffset:]
	}
	return pr
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

func stripPrefix(name, prefix string) string {
	if name == "/dev/null" {
		return name
	}
	if i := strings.IndexByte(name, '\t'); i >= 0 {
		name = name[:i]
	}
	return strings.TrimPrefix(name, prefix)
}

// gitDiffNames splits "diff --git a/x b/x" into its two names.
func gitDiffNames(l string) (string, string) {
	rest := strings.TrimPrefix(l, "diff --git ")
	if i := strings.Index(rest, " b/"); i >= 0 {
		return strings.TrimPrefix(rest[:i], "a/"), rest[i+3:]
	}
	f := strings.Fields(rest)
	if len(f) == 2 {
		return f[0], f[1]
	}
	return rest, rest
}

// diffsize is the number of lines (hunk headers included) of the diff
// between two texts with three lines of context: the cost of pairing them.
func diffsize(a, b string) int {
	opt := linediff.DefaultOptions()
	hunks, _, _ := linediff.UnifiedWith([]byte(a), []byte(b), opt)
	return strings.Count(hunks, "\n")
}

// Diff returns the range-diff from the old series to the new one, as git
// range-diff --no-color --creation-factor=factor prints it; width is the
// length of the commit ids shown (their dashes for a missing side).
func Diff(old, new []Patch, factor int) string {
	a, b := make([]*prepared, len(old)), make([]*prepared, len(new))
	for i, p := range old {
		a[i] = prepare(p)
	}
	for j, p := range new {
		b[j] = prepare(p)
	}
	// Exact matches of the diffs first.
	byDiff := map[string][]int{}
	for i, p := range a {
		byDiff[p.diff] = append(byDiff[p.diff], i)
	}
	for j, p := range b {
		if is := byDiff[p.diff]; len(is) > 0 {
			i := is[0]
			byDiff[p.diff] = is[1:]
			a[i].matching, p.matching = j, i
		}
	}
	// Then the cheapest assignment of the rest.
	n := len(a) + len(b)
	cost := make([][]int, n) // cost[i][j]: row i of a (or a dummy), column j of b (or a dummy)
	for i := range cost {
		cost[i] = make([]int, n)
	}
	for i, pa := range a {
		for j, pb := range b {
			switch {
			case pa.matching == j:
				cost[i][j] = 0
			case pa.matching < 0 && pb.matching < 0:
				cost[i][j] = diffsize(pa.diff, pb.diff)
			default:
				cost[i][j] = costMax
			}
		}
		c := costMax
		if pa.matching < 0 {
			c = pa.diffsize * factor / 100
		}
		for j := len(b); j < n; j++ {
			cost[i][j] = c
		}
	}
	for j, pb := range b {
		c := costMax
		if pb.matching < 0 {
			c = pb.diffsize * factor / 100
		}
		for i := len(a); i < n; i++ {
			cost[i][j] = c
		}
	}
	a2b := assign(cost)
	for i := range a {
		if j := a2b[i]; j >= 0 && j < len(b) {
			a[i].matching, b[j].matching = j, i
		}
	}
	return output(a, b)
}

func output(a, b []*prepared) string {
	var out strings.Builder
	width := len(fmt.Sprint(1 + max(len(a), len(b))))
	dashes := ""
	for _, p := range append(append([]*prepared{}, a...), b...) {
		dashes = strings.Repeat("-", len(p.Commit))
		break
	}
	header := func(pa, pb *prepared, ia, ib int) {
		status := byte('=')
		switch {
		case pb == nil:
			status = '<'
		case pa == nil:
			status = '>'
		case pa.text != pb.text:
			status = '!'
		}
		if pa == nil {
			fmt.Fprintf(&out, "%*s:  %s ", width, "-", dashes)
		} else {
			fmt.Fprintf(&out, "%*d:  %s ", width, ia+1, pa.Commit)
		}
		out.WriteByte(status)
		if pb == nil {
			fmt.Fprintf(&out, " %*s:  %s", width, "-", dashes)
		} else {
			fmt.Fprintf(&out, " %*d:  %s", width, ib+1, pb.Commit)
		}
		subj := pb
		if pa != nil {
			subj = pa
		}
		out.WriteString(" " + subj.Subject() + "\n")
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		for i < len(a) && a[i].shown {
			i++
		}
		if i < len(a) && a[i].matching < 0 {
			header(a[i], nil, i, 0)
			i++
			continue
		}
		for j < len(b) && b[j].matching < 0 {
			header(nil, b[j], 0, j)
			j++
		}
		if j < len(b) {
			m := b[j].matching
			header(a[m], b[j], m, j)
			if a[m].text != b[j].text {
				out.WriteString(innerDiff(a[m].text, b[j].text))
			}
			a[m].shown = true
			j++
		}
	}
	return out.String()
}

var sectionRE = []*regexp.Regexp{regexp.MustCompile(`^ ## (.*) ##$`), regexp.MustCompile(`^.?@@ (.*)$`)}

// sectionName is range-diff's hunk-header rule: a " ## section ##" line
// or an "@@ ..." line names the hunks below it.
func sectionName(line []byte) ([]byte, bool) {
	l := strings.TrimRight(string(line), "\n")
	for _, re := range sectionRE {
		if m := re.FindStringSubmatch(l); m != nil {
			name := m[1]
			if len(name) > 80 {
				name = name[:80]
			}
			return []byte(strings.TrimRightFunc(name, isSpace)), true
		}
	}
	return nil, false
}

// innerDiff is the diff of two patch texts as range-diff shows it: no file
// headers, "@@ section" hunk headers without line numbers, every line
// indented by four spaces.
func innerDiff(a, b string) string {
	opt := linediff.DefaultOptions()
	opt.FuncName = sectionName
	hunks, _, _ := linediff.UnifiedWith([]byte(a), []byte(b), opt)
	var out strings.Builder
	for _, l := range strings.SplitAfter(hunks, "\n") {
		if l == "" {
			continue
		}
		if m := hunkRE.FindStringSubmatch(strings.TrimSuffix(l, "\n")); m != nil {
			l = "@@" + m[1] + "\n"
		}
		out.WriteString("    " + l)
	}
	return out.String()
}
