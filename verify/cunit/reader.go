package cunit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"path"
	"strings"
	"sync"
)

// What each unit reads of a file at a patch, and the caches that let the
// rules, running in parallel, share units and their inputs.

// Side selects which content of a file a unit reads.
type Side int

// The sides.
const (
	After  Side = iota // the file after patch n
	Before             // the file before patch n (after n-1)
)

type unitKey struct {
	path string
	n    int
	side Side
	env  string
}

// Reader reads the units of one series, each once: the rules run in
// parallel and ask for the same units.
type Reader struct {
	s      Series
	mu     sync.Mutex
	units  map[unitKey]*unitEntry
	inputs map[inputKey]*Input
	names  map[string]map[string]int // path -> function -> the first patch that touched it
	texts  map[textKey]*textEntry
	kb     *kbuildReader // nil: no build tree, every unit is the prelude's
	disk   string        // where the prelude's units are kept between runs ("": not kept)
	kunits map[unitKey]*kunitEntry
}

// Options says how a Reader reads C.
type Options struct {
	// Context stops the preprocessing of kbuild units; nil: never.
	Context context.Context
	// Trees are the kernel build trees the C files are read in (each
	// preprocessed as kbuild compiles it there); none: the prelude stands
	// in for the kernel headers.
	Trees []*Tree
	// Cache keeps the units between runs ("": no cache).
	Cache string
}

// NewReader returns a Reader of s. With build trees it makes a temporary
// directory for the series' files, which Close removes.
func NewReader(s Series, opt Options) (*Reader, error) {
	r := &Reader{s: s, units: map[unitKey]*unitEntry{}, inputs: map[inputKey]*Input{}, names: map[string]map[string]int{}, texts: map[textKey]*textEntry{}, kunits: map[unitKey]*kunitEntry{}}
	r.disk = opt.Cache
	if opt.Cache != "" && len(opt.Trees) == 0 {
		pruneCache(opt.Cache)
	}
	if len(opt.Trees) > 0 {
		ctx := opt.Context
		if ctx == nil {
			ctx = context.Background()
		}
		kb, err := newKbuildReader(ctx, opt.Trees, opt.Cache)
		if err != nil {
			return nil, err
		}
		r.kb = kb
	}
	return r, nil
}

// Close removes what the Reader made on disk for its run.
func (r *Reader) Close() {
	if r.kb != nil {
		r.kb.close()
	}
}

// CReads returns how each C file was read, or nil without build trees.
func (r *Reader) CReads() []CRead {
	if r.kb == nil {
		return nil
	}
	return r.kb.cReads()
}

type kunitEntry struct {
	once sync.Once
	u    *Unit
	ok   bool
}

// kbuildUnit returns path after (or before) patch n as build tree t
// compiles it, and whether it could be read so (if not, the prelude's
// units stand in, and the report says why). A file absent there is a nil
// unit, read.
func (r *Reader) kbuildUnit(kb *kbuildReader, t *Tree, path string, n int, side Side) (*Unit, bool) {
	ent := entryOf(&r.mu, r.kunits, unitKey{path, n, side, "kbuild " + t.Name})
	ent.once.Do(func() {
		in := r.Input(path, n, side)
		if in == nil {
			ent.ok = true
			return
		}
		u, why := r.readKbuild(kb, t, in, path)
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
	u    *Unit
}

// Unit returns path parsed in e after (or before) patch n, or nil when the
// file does not exist there. Files the series creates are read whole; of
// a file it edits, only the definitions the series touches up to that
// patch (and the declarations patch n changes) are kept, the rest of the
// file blanked but its preprocessor lines kept. An edit whose result is
// unknown (posted mail without the tree) is read from its hunk: its lines
// at their line numbers.
func (r *Reader) Unit(path string, n int, side Side, e Env) *Unit {
	if kb := r.kb; kb != nil && strings.HasSuffix(path, ".c") {
		if u, ok := r.kbuildUnit(kb, kb.treeFor(e), path, n, side); ok {
			return u
		}
	}
	ent := entryOf(&r.mu, r.units, unitKey{path, n, side, e.String()})
	ent.once.Do(func() { ent.u = r.parseUnit(r.Input(path, n, side), path, e) })
	return ent.u
}

// Input is what a unit gives cc/v4, whatever the build.
type Input struct {
	once   sync.Once
	digest []byte   // of the input, see inputDigest
	conds  []string // the names its conditionals test
	at     int      // the patch whose result is read
	text   []byte   // the file (or the hunk's lines)
	// Keep are the chunks of the file read: all of a file the series
	// creates, of a file it edits the definitions it touches.
	Keep []Chunk
	// Blank is the text with only Keep and the preprocessor lines, the
	// rest blanked but its newlines (the lines keep their numbers).
	Blank []byte
}

type inputKey struct {
	path string
	n    int
	side Side
}

// Input returns what the unit of path after (or before) patch n reads, or
// nil when the file does not exist there.
func (r *Reader) Input(path string, n int, side Side) *Input {
	k := inputKey{path, n, side}
	r.mu.Lock()
	in, ok := r.inputs[k]
	r.mu.Unlock()
	if ok {
		return in
	}
	in = r.readInput(path, n, side)
	r.mu.Lock()
	r.inputs[k] = in
	r.mu.Unlock()
	return in
}

func (r *Reader) readInput(path string, n int, side Side) *Input {
	s := r.s
	at := n
	if side == Before {
		at = n - 1
	}
	f := s.Change(n, path)
	var text []byte
	var changed []Line // the lines patch n changes, numbered in text
	sparse := false
	switch {
	case f != nil && !f.Known:
		lines, shown := f.Added, f.NewSide
		if side == Before {
			lines, shown = f.Removed, f.OldSide
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
			if side == Before {
				changed = f.Removed
			}
		}
	}
	if !sparse {
		// The same version of the file with the same changed lines reads
		// the same: share what is cut from it.
		tk := textKey{path: path, version: s.Version(path, at)}
		if f != nil {
			tk.changedBy, tk.side = n, side
		}
		ent := entryOf(&r.mu, r.texts, tk)
		ent.once.Do(func() { ent.keep, ent.blank = r.cutUnit(path, at, text, changed, false) })
		return &Input{at: at, text: text, Keep: ent.keep, Blank: ent.blank}
	}
	keep, blank := r.cutUnit(path, at, text, changed, true)
	return &Input{at: at, text: text, Keep: keep, Blank: blank}
}

// textKey identifies what a unit reads of a file: its version (the last
// patch that changed it), and the patch whose changed lines are kept with
// the side they are on (0 when the unit's patch does not change the file).
type textKey struct {
	path      string
	version   int
	changedBy int
	side      Side
}

// textEntry is what cutUnit made of a textKey.
type textEntry struct {
	once  sync.Once
	keep  []Chunk
	blank []byte
}

// cutUnit chooses the chunks of text a unit gives cc/v4 (see unit) and
// blanks the rest.
func (r *Reader) cutUnit(path string, at int, text []byte, changed []Line, sparse bool) ([]Chunk, []byte) {
	whole := sparse || r.s.Created(path)
	var touched map[string]int
	if !whole {
		touched = r.touchedNames(path)
	}
	var keep []Chunk
	for _, ch := range Chunks(text) {
		switch {
		case whole, ch.Typedef:
			keep = append(keep, ch)
		case ch.Fn && touched[ch.Name] > 0 && touched[ch.Name] <= at:
			keep = append(keep, ch)
		case !ch.Fn && !ch.Brace && overlaps(ch, changed): // a declaration (a prototype) the patch changes
			keep = append(keep, ch)
		case ch.Fn && overlaps(ch, changed):
			keep = append(keep, ch)
		}
	}
	return keep, blankExcept(text, keep)
}

func (r *Reader) parseUnit(in *Input, path string, e Env) *Unit {
	if in == nil {
		return nil
	}
	s := r.s
	at, text, keep, blank := in.at, in.text, in.Keep, in.Blank
	// Units with the same input parse the same: the file as given to
	// cc/v4, the series' headers it includes, and what the build decides
	// in their conditionals (two builds that define the same of the names
	// the #if lines test see the same code).
	in.once.Do(func() { in.digest, in.conds = r.inputDigest(path, at, blank) })
	h := sha256.New()
	h.Write(in.digest)
	defined := map[string]bool{}
	for _, d := range e.Defines {
		defined[d] = true
	}
	for _, n := range in.conds {
		switch {
		case n == "BITS_PER_LONG":
			fmt.Fprintf(h, "\x00%s=%d", n, e.Bits)
		case strings.HasPrefix(n, "__"): // the compiler's predefined macros
			fmt.Fprintf(h, "\x00%s@%s", n, e.Arch)
		default:
			fmt.Fprintf(h, "\x00%s=%v", n, defined[n])
		}
	}
	// and what the tree serves (include/linux/sizes.h)
	if s.Tree() != nil {
		fmt.Fprintf(h, "\x00tree %s %s %v", s.Tree().Dir, s.Tree().Base, s.Tree().Commit)
	}
	key := string(h.Sum(nil))
	ent := sharedUnits.entry(key)
	ent.once.Do(func() {
		disk := preludePath(r.disk, key)
		if u := loadPreludeUnit(disk); u != nil {
			u.Path, u.Text = path, text
			for _, f := range u.Funcs {
				f.UnitPath, f.UnitText = path, text
			}
			ent.u = u
			return
		}
		ent.u = r.parseChunks(path, at, e, text, keep)
		if ent.u.Err == nil {
			storePreludeUnit(disk, ent.u)
		}
	})
	if u := ent.u; u != nil && !bytes.Equal(u.Text, text) {
		// the same code with other comments and blank lines around the
		// definitions it reads: the units are the same but for the text
		return u.withText(path, text)
	}
	return ent.u
}

// withText returns a copy of u that reads text at path.
func (u *Unit) withText(path string, text []byte) *Unit {
	c := *u
	c.Path, c.Text = path, text
	c.Funcs = make([]*Func, len(u.Funcs))
	for i, f := range u.Funcs {
		fc := *f
		fc.UnitPath, fc.UnitText = path, text
		c.Funcs[i] = &fc
	}
	return &c
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
func (r *Reader) inputDigest(path string, n int, blank []byte) ([]byte, []string) {
	s := r.s
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", path)
	h.Write(blank)
	conds := map[string]bool{}
	scan := func(src []byte) {
		eachDirective(src, func(name string, rest []byte) {
			switch name {
			case "if", "ifdef", "ifndef", "elif":
				for _, w := range identWordRE().FindAll(rest, -1) {
					if string(w) != "defined" {
						conds[string(w)] = true
					}
				}
			}
		})
	}
	scan(blank)
	for _, inc := range r.includedHeaders(n, path, blank) {
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
func (r *Reader) includedHeaders(n int, file string, src []byte) []string {
	s := r.s
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
				if !s.Created(cand) || seen[cand] {
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
func (r *Reader) touchedNames(path string) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	first, ok := r.names[path]
	if !ok {
		first = map[string]int{}
		for _, k := range r.s.Changes(path) {
			f := r.s.Change(k, path)
			if f == nil || !f.Known || f.Deleted {
				continue
			}
			for _, ch := range Chunks(f.New) {
				if _, seen := first[ch.Name]; ch.Fn && !seen && overlaps(ch, f.Added) {
					first[ch.Name] = k
				}
			}
		}
		r.names[path] = first
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

func overlaps(ch Chunk, lines []Line) bool {
	for _, l := range lines {
		if l.N >= ch.StartLine && l.N <= ch.EndLine {
			return true
		}
	}
	return false
}

// ResetShared forgets the prelude's units parsed in this process, as a
// new process starts without them (the tests of the cache on disk).
func ResetShared() { sharedUnits.reset() }
