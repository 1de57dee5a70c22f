package verify

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"path"
	"strings"
	"sync"
)

// What each unit reads of a file at a patch, and the caches that let the
// rules, running in parallel, share units and their inputs.

// unitSide selects which content of a file a unit reads.
type unitSide int

const (
	afterPatch  unitSide = iota // the file after patch n
	beforePatch                 // the file before patch n (after n-1)
)

type unitKey struct {
	path string
	n    int
	side unitSide
	env  string
}

// unitCache parses each unit once per Run; the rules run in parallel and
// ask for the same units.
type unitCache struct {
	mu     sync.Mutex
	units  map[unitKey]*unitEntry
	inputs map[inputKey]*unitInput
	names  map[string]map[string]int // path -> function -> the first patch that touched it
	texts  map[textKey]*textEntry
	evals  map[string]Finding // C_EVAL findings by what failed (see evalFinding)
	kb     *kbuildReader      // nil: no build tree, every unit is the prelude's
	disk   string             // where the prelude's units are kept between runs ("": not kept)
	kunits map[unitKey]*kunitEntry
}

type kunitEntry struct {
	once sync.Once
	u    *cUnit
	ok   bool
}

// kbuildUnit returns path after (or before) patch n as build tree t
// compiles it, and whether it could be read so (if not, the prelude's
// units stand in, and the report says why). A file absent there is a nil
// unit, read.
func (c *checker) kbuildUnit(kb *kbuildReader, t *BuildTree, path string, n int, side unitSide) (*cUnit, bool) {
	ent := entryOf(&c.units.mu, c.units.kunits, unitKey{path, n, side, "kbuild " + t.Name})
	ent.once.Do(func() {
		in := c.input(path, n, side)
		if in == nil {
			ent.ok = true
			return
		}
		u, why := c.s.kbuildUnit(kb, t, in, path)
		if u == nil {
			kb.notePrelude(path, why)
			return
		}
		ent.u, ent.ok = u, true
	})
	return ent.u, ent.ok
}

// entryOf returns m's entry for k, adding a new one, under mu: the
// caches' entries are filled once (their sync.Once) by whoever asks first.
func entryOf[K comparable, E any](mu *sync.Mutex, m map[K]*E, k K) *E {
	mu.Lock()
	defer mu.Unlock()
	e := m[k]
	if e == nil {
		e = new(E)
		m[k] = e
	}
	return e
}

type unitEntry struct {
	once sync.Once
	u    *cUnit
}

func newUnitCache() *unitCache {
	return &unitCache{units: map[unitKey]*unitEntry{}, inputs: map[inputKey]*unitInput{}, names: map[string]map[string]int{}, texts: map[textKey]*textEntry{}, evals: map[string]Finding{}, kunits: map[unitKey]*kunitEntry{}}
}

// unit returns path parsed in e after (or before) patch n, or nil when the
// file does not exist there. Files the series creates are read whole; of
// a file it edits, only the definitions the series touches up to that
// patch (and the declarations patch n changes) are kept, the rest of the
// file blanked but its preprocessor lines kept. An edit whose result is
// unknown (posted mail without the tree) is read from its hunk: its lines
// at their line numbers.
func (c *checker) unit(path string, n int, side unitSide, e cenv) *cUnit {
	c.stopped()
	if kb := c.units.kb; kb != nil && strings.HasSuffix(path, ".c") {
		if u, ok := c.kbuildUnit(kb, kb.treeFor(e), path, n, side); ok {
			return u
		}
	}
	ent := entryOf(&c.units.mu, c.units.units, unitKey{path, n, side, e.String()})
	ent.once.Do(func() { ent.u = c.s.parseUnit(c.units, c.input(path, n, side), path, e) })
	return ent.u
}

// unitInput is what a unit gives cc/v4, whatever the build.
type unitInput struct {
	once   sync.Once
	digest []byte   // of the input, see inputDigest
	conds  []string // the names its conditionals test
	at     int      // the patch whose result is read
	text   []byte   // the file (or the hunk's lines)
	keep   []cChunk
	blank  []byte // text with only keep and the preprocessor lines
}

type inputKey struct {
	path string
	n    int
	side unitSide
}

// input returns what the unit of path after (or before) patch n reads, or
// nil when the file does not exist there.
func (c *checker) input(path string, n int, side unitSide) *unitInput {
	k := inputKey{path, n, side}
	c.units.mu.Lock()
	in, ok := c.units.inputs[k]
	c.units.mu.Unlock()
	if ok {
		return in
	}
	in = c.s.unitInput(c.units, path, n, side)
	c.units.mu.Lock()
	c.units.inputs[k] = in
	c.units.mu.Unlock()
	return in
}

func (s *Series) unitInput(cache *unitCache, path string, n int, side unitSide) *unitInput {
	at := n
	if side == beforePatch {
		at = n - 1
	}
	f := fileOf(s.Patch(n), path)
	var text []byte
	var changed []Line // the lines patch n changes, numbered in text
	sparse := false
	switch {
	case f != nil && !f.Known:
		lines, shown := f.Added, f.newSide
		if side == beforePatch {
			lines, shown = f.Removed, f.oldSide
		}
		if shown == nil {
			shown = lines
		}
		// the hunks' lines on that side, context included (a comment or a
		// definition may open on a context line)
		text, changed, sparse = sparseText(shown), lines, true
	default:
		c, ok := s.FileAt(path, at)
		if !ok {
			return nil
		}
		text = c
		if f != nil {
			changed = f.Added
			if side == beforePatch {
				changed = f.Removed
			}
		}
	}
	if !sparse {
		// The same version of the file with the same changed lines reads
		// the same: share what is cut from it.
		tk := textKey{path: path, version: s.version(path, at)}
		if f != nil {
			tk.changedBy, tk.side = n, side
		}
		ent := entryOf(&cache.mu, cache.texts, tk)
		ent.once.Do(func() { ent.keep, ent.blank = s.cutUnit(cache, path, at, text, changed, false) })
		return &unitInput{at: at, text: text, keep: ent.keep, blank: ent.blank}
	}
	keep, blank := s.cutUnit(cache, path, at, text, changed, true)
	return &unitInput{at: at, text: text, keep: keep, blank: blank}
}

// textKey identifies what a unit reads of a file: its version (the last
// patch that changed it), and the patch whose changed lines are kept with
// the side they are on (0 when the unit's patch does not change the file).
type textKey struct {
	path      string
	version   int
	changedBy int
	side      unitSide
}

// textEntry is what cutUnit made of a textKey.
type textEntry struct {
	once  sync.Once
	keep  []cChunk
	blank []byte
}

// cutUnit chooses the chunks of text a unit gives cc/v4 (see unit) and
// blanks the rest.
func (s *Series) cutUnit(cache *unitCache, path string, at int, text []byte, changed []Line, sparse bool) ([]cChunk, []byte) {
	whole := sparse || s.created[path]
	var touched map[string]int
	if !whole {
		touched = cache.touchedNames(s, path)
	}
	var keep []cChunk
	for _, ch := range cChunks(text) {
		switch {
		case whole, ch.typedef:
			keep = append(keep, ch)
		case ch.fn && touched[ch.name] > 0 && touched[ch.name] <= at:
			keep = append(keep, ch)
		case !ch.fn && !ch.brace && overlaps(ch, changed): // a declaration (a prototype) the patch changes
			keep = append(keep, ch)
		case ch.fn && overlaps(ch, changed):
			keep = append(keep, ch)
		}
	}
	return keep, blankExcept(text, keep)
}

func (s *Series) parseUnit(cache *unitCache, in *unitInput, path string, e cenv) *cUnit {
	if in == nil {
		return nil
	}
	at, text, keep, blank := in.at, in.text, in.keep, in.blank
	// Units with the same input parse the same: the file as given to
	// cc/v4, the series' headers it includes, and what the build decides
	// in their conditionals (two builds that define the same of the names
	// the #if lines test see the same code).
	in.once.Do(func() { in.digest, in.conds = s.inputDigest(path, at, blank) })
	h := sha256.New()
	h.Write(in.digest)
	defined := map[string]bool{}
	for _, d := range e.defines {
		defined[d] = true
	}
	for _, n := range in.conds {
		switch {
		case n == "BITS_PER_LONG":
			fmt.Fprintf(h, "\x00%s=%d", n, e.bits)
		case strings.HasPrefix(n, "__"): // the compiler's predefined macros
			fmt.Fprintf(h, "\x00%s@%s", n, e.arch)
		default:
			fmt.Fprintf(h, "\x00%s=%v", n, defined[n])
		}
	}
	// and what the tree serves (include/linux/sizes.h)
	if s.Tree != nil {
		fmt.Fprintf(h, "\x00tree %s %s %v", s.Tree.Dir, s.Tree.Base, s.Tree.Commit)
	}
	key := string(h.Sum(nil))
	ent := sharedUnits.entry(key)
	ent.once.Do(func() {
		disk := preludePath(cache.disk, key)
		if u := loadPreludeUnit(disk); u != nil {
			u.path, u.text = path, text
			for _, f := range u.funcs {
				f.unitPath, f.unitText = path, text
			}
			ent.u = u
			return
		}
		ent.u = parseChunks(s, path, at, e, text, keep)
		if ent.u.err == nil {
			storePreludeUnit(disk, ent.u)
		}
	})
	return ent.u
}

// sharedUnits are the prelude's units parsed in this process, by what they
// read (see parseUnit): runs on series that share files (a revision and
// its edited copies, the same series checked twice) parse them once. A
// unit is not changed once parsed. The map is emptied when it holds
// maxSharedUnits, so that a long process does not keep every unit.
var sharedUnits = &unitStore{m: map[string]*unitEntry{}}

const maxSharedUnits = 20000

type unitStore struct {
	mu sync.Mutex
	m  map[string]*unitEntry
}

// reset forgets every unit (as a new process starts without them).
func (st *unitStore) reset() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.m = map[string]*unitEntry{}
}

func (st *unitStore) entry(key string) *unitEntry {
	st.mu.Lock()
	defer st.mu.Unlock()
	ent := st.m[key]
	if ent == nil {
		if len(st.m) >= maxSharedUnits {
			st.m = map[string]*unitEntry{}
		}
		ent = &unitEntry{}
		st.m[key] = ent
	}
	return ent
}

// inputDigest hashes what a unit of path reads at patch n (blank, and the
// series' headers it includes) and lists the names their conditionals test.
func (s *Series) inputDigest(path string, n int, blank []byte) ([]byte, []string) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", path)
	h.Write(blank)
	conds := map[string]bool{}
	scan := func(src []byte) {
		eachDirective(src, func(name string, rest []byte) {
			switch name {
			case "if", "ifdef", "ifndef", "elif":
				for _, w := range identWordRE.FindAll(rest, -1) {
					if string(w) != "defined" {
						conds[string(w)] = true
					}
				}
			}
		})
	}
	scan(blank)
	for _, inc := range s.includedHeaders(n, path, blank) {
		c, _ := s.FileAt(inc, n)
		fmt.Fprintf(h, "\x00%s\x00%d\x00", inc, len(c))
		h.Write(c)
		scan(c)
	}
	return h.Sum(nil), sortedKeys(conds)
}

// eachDirective calls f with the name and the rest of every preprocessor
// line of src (continuations joined).
func eachDirective(src []byte, f func(name string, rest []byte)) {
	for len(src) > 0 {
		i := 0
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		end := i
		for end < len(src) && !(src[end] == '\n' && (end == 0 || src[end-1] != '\\')) {
			end++
		}
		if i < len(src) && src[i] == '#' {
			d := bytes.TrimLeft(src[i+1:end], " \t")
			j := 0
			for j < len(d) && isIdentByte(d[j]) {
				j++
			}
			f(string(d[:j]), d[j:])
		}
		if end >= len(src) {
			break
		}
		src = src[end+1:]
	}
}

// includedHeaders returns the headers the series creates that src (the
// file path) includes at patch n, directly or through one another, as cfs
// serves them: from the include paths, and a quoted name also next to the
// file that includes it.
func (s *Series) includedHeaders(n int, file string, src []byte) []string {
	seen := map[string]bool{}
	var visit func(file string, src []byte)
	visit = func(file string, src []byte) {
		eachDirective(src, func(d string, rest []byte) {
			if d != "include" {
				return
			}
			arg := strings.TrimSpace(string(rest))
			name := strings.Trim(arg, `<>"`)
			cands := []string{"include/" + name, "arch/x86/include/" + name,
				"include/asm-generic/" + strings.TrimPrefix(name, "asm/")}
			if strings.HasPrefix(arg, `"`) {
				cands = append(cands, path.Join(path.Dir(file), name))
			}
			for _, cand := range cands {
				if !s.created[cand] || seen[cand] {
					continue
				}
				if c, ok := s.FileAt(cand, n); ok {
					seen[cand] = true
					visit(cand, c)
				}
			}
		})
	}
	visit(file, src)
	return sortedKeys(seen)
}

// touchedNames returns, for the functions of path (a file the series
// edits) whose definitions a patch changed, the first patch that did; a
// function counts at patch n when that is n or before.
func (uc *unitCache) touchedNames(s *Series, path string) map[string]int {
	uc.mu.Lock()
	defer uc.mu.Unlock()
	first, ok := uc.names[path]
	if !ok {
		first = map[string]int{}
		for _, k := range s.changes[path] {
			f := fileOf(s.Patches[k-1], path)
			if f == nil || !f.Known || f.Deleted {
				continue
			}
			for _, ch := range cChunks(f.New) {
				if _, seen := first[ch.name]; ch.fn && !seen && overlaps(ch, f.Added) {
					first[ch.name] = k
				}
			}
		}
		uc.names[path] = first
	}
	return first
}

// sparseText places lines at their line numbers, blank lines between.
func sparseText(lines []Line) []byte {
	var b strings.Builder
	cur := 1
	for _, l := range lines {
		for ; cur < l.N; cur++ {
			b.WriteByte('\n')
		}
		if cur == l.N {
			b.WriteString(l.Text)
			b.WriteByte('\n')
			cur++
		}
	}
	return []byte(b.String())
}

func overlaps(ch cChunk, lines []Line) bool {
	for _, l := range lines {
		if l.N >= ch.startLine && l.N <= ch.endLine {
			return true
		}
	}
	return false
}
