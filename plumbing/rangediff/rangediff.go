package rangediff

import (
	"container/list"
	"context"
	"fmt"
	"regexp"
	"strings"

	"kpatch/plumbing/linediff"
)

// Patch is one patch of a series as range-diff sees it.
type Patch struct {
	Commit  string // the commit id shown in the pair line (abbreviated as the caller wants)
	Author  string // "Name <address>", or a From: header's mailbox (quoted names are unquoted as git am does)
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
// output of git log -p --no-prefix with its own output indicators, the
// author mapped through mm.
func prepare(p Patch, mm *Mailmap) *prepared {
	var b strings.Builder
	b.WriteString(" ## Metadata ##\nAuthor: " + authorLine(p.Author, mm) + "\n\n ## Commit message ##\n")
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

// Options tunes DiffContext.
type Options struct {
	// CreationFactor is git range-diff's --creation-factor: the cost of
	// leaving a patch unpaired, in percent of its size. Callers usually
	// want DefaultCreationFactor.
	CreationFactor int
	// Mailmap maps authors to their canonical names as git log does with
	// the repository's .mailmap; nil maps nobody.
	Mailmap *Mailmap
}

// Diff returns the range-diff from the old series to the new one, as git
// range-diff --no-color --creation-factor=factor prints it, without a
// mailmap and without a way to stop it; see DiffContext.
func Diff(old, new []Patch, factor int) string {
	out, _ := DiffContext(context.Background(), old, new, Options{CreationFactor: factor})
	return out
}

// DiffContext returns the range-diff from the old series to the new one,
// as git range-diff --no-color prints it. Patches with equal diffs are
// paired first, in git's order; the rest are paired by git's
// minimum-cost assignment. Time is quadratic in the number of patches
// (as git's is) and memory linear, except for a matrix of the costs
// between the patches that have no exact match. It stops with ctx's
// error when ctx is done.
func DiffContext(ctx context.Context, old, new []Patch, opt Options) (string, error) {
	a, b := make([]*prepared, len(old)), make([]*prepared, len(new))
	for i, p := range old {
		a[i] = prepare(p, opt.Mailmap)
	}
	for j, p := range new {
		b[j] = prepare(p, opt.Mailmap)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	exactMatches(a, b)
	if err := correspond(ctx, a, b, opt.CreationFactor); err != nil {
		return "", err
	}
	return output(ctx, a, b)
}

// exactMatches pairs the patches whose diffs are equal as git's
// find_exact_matches does: the old patches go into git's hash map, and
// each new patch takes the first equal one in its bucket's chain. git
// adds at the head of a chain and reverses every chain when the map
// grows (more entries than 80% of its buckets, starting at 64, growing
// and shrinking by 4) or shrinks (fewer than a fifth of that), so equal
// diffs are paired in an order this reproduces.
func exactMatches(a, b []*prepared) {
	const initialSize = 64
	chains := map[string]*list.List{}
	size, tableSize, growAt, shrinkAt := 0, initialSize, initialSize*80/100, 0
	reversed := false // when true, a chain's head is its list's back
	resize := func(to int) {
		tableSize = to
		growAt = to * 80 / 100
		shrinkAt = 0
		if to > initialSize {
			shrinkAt = growAt / 5
		}
		reversed = !reversed
	}
	for i, p := range a {
		l := chains[p.diff]
		if l == nil {
			l = list.New()
			chains[p.diff] = l
		}
		if reversed {
			l.PushBack(i)
		} else {
			l.PushFront(i)
		}
		if size++; size > growAt {
			resize(tableSize << 2)
		}
	}
	for j, p := range b {
		l := chains[p.diff]
		if l == nil || l.Len() == 0 {
			continue
		}
		e := l.Front()
		if reversed {
			e = l.Back()
		}
		i := l.Remove(e).(int)
		a[i].matching, p.matching = j, i
		if size--; size < shrinkAt {
			resize(tableSize >> 2)
		}
	}
}

// correspond pairs the patches without an exact match as git's
// get_correspondences does: a square cost matrix over the old patches
// and as many "created" placeholders (columns) against the new patches
// and as many "deleted" placeholders (rows), solved by assign. Only the
// costs between unpaired patches are computed and stored; the others
// follow from the pairing.
func correspond(ctx context.Context, a, b []*prepared, factor int) error {
	var ua, ub []int // unpaired patches of each side
	ia, ib := make([]int, len(a)), make([]int, len(b))
	for i, p := range a {
		ia[i] = -1
		if p.matching < 0 {
			ia[i] = len(ua)
			ua = append(ua, i)
		}
	}
	for j, p := range b {
		ib[j] = -1
		if p.matching < 0 {
			ib[j] = len(ub)
			ub = append(ub, j)
		}
	}
	pair := make([]int32, len(ua)*len(ub))
	for x, i := range ua {
		for y, j := range ub {
			if (x*len(ub)+y)%checkEvery == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			pair[x*len(ub)+y] = int32(diffsize(a[i].diff, b[j].diff))
		}
	}
	created := func(p *prepared) int {
		if p.matching >= 0 {
			return costMax
		}
		return p.diffsize * factor / 100
	}
	na, nb := len(a), len(b)
	cost := func(col, row int) int {
		switch {
		case col < na && row < nb:
			switch pa := a[col]; {
			case pa.matching == row:
				return 0
			case ia[col] >= 0 && ib[row] >= 0:
				return int(pair[ia[col]*len(ub)+ib[row]])
			}
			return costMax
		case col < na:
			return created(a[col])
		case row < nb:
			return created(b[row])
		}
		return 0
	}
	a2b, err := assign(ctx, na+nb, cost)
	if err != nil {
		return err
	}
	for i := range a {
		if j := a2b[i]; j >= 0 && j < nb {
			a[i].matching, b[j].matching = j, i
		}
	}
	return nil
}

// output prints the pairs in git's order (show_range_diff).
func output(ctx context.Context, a, b []*prepared) (string, error) {
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
			if j%checkEvery == 0 && ctx.Err() != nil {
				return "", ctx.Err()
			}
			m := b[j].matching
			header(a[m], b[j], m, j)
			if a[m].text != b[j].text {
				out.WriteString(innerDiff(a[m].text, b[j].text))
			}
			a[m].shown = true
			j++
		}
	}
	return out.String(), nil
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
