package cunit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"modernc.org/cc/v4"

	"kpatch/plumbing/kbuild"
)

// The C files of the series read as the compiler reads them: a C file at
// a patch is preprocessed with the compile command kbuild recorded in a
// build tree for it (or a sibling), the series' files at that patch laid
// over the tree's, and the translation unit is parsed by cc/v4 with the
// real kernel headers' typedefs. Where that cannot be done (no build
// tree, no compiler, a file whose content is unknown, a preprocessing
// error), the unit is read the prelude's way (reader.go) and the report
// says so per file.

// treeCommand is the compile command a file is preprocessed with.
type treeCommand struct {
	cmd  *kbuild.CompileCommand
	from string // the object whose command it is ("kernel/fork.o")
	err  error
}

// command returns the compile command path is preprocessed with in t.
func (t *Tree) command(path string) *treeCommand {
	cmd, from, err := t.Command(path)
	return &treeCommand{cmd, from, err}
}

// kbuildReader preprocesses the units of one Run.
type kbuildReader struct {
	ctx   context.Context
	trees []*Tree
	tmp   string // the overlay directories (removed at the end of the run)
	cache string // preprocessed units kept between runs ("" for none)

	mu       sync.Mutex
	overlays map[int]*overlayEntry     // by patch state
	files    map[int]map[string][]byte // overlayFiles by patch state
	facts    map[string]*unitFacts     // the units made in this run, by unitKey
	reads    map[string]*fileRead      // how each file was read, by path
	making   map[string]*sync.Mutex    // held while a unit is made, by unitKey
}

// lockUnit holds the making of the unit key: two rules asking for one
// unit at once ran gcc on it twice, into the same temporary file, and the
// first to finish removed it under the other ("open ....i: no such file or
// directory", seen on itmt-sched). The second now waits and reads what
// the first stored.
func (kb *kbuildReader) lockUnit(key string) (unlock func()) {
	kb.mu.Lock()
	if kb.making == nil {
		kb.making = map[string]*sync.Mutex{}
	}
	m := kb.making[key]
	if m == nil {
		m = &sync.Mutex{}
		kb.making[key] = m
	}
	kb.mu.Unlock()
	m.Lock()
	return m.Unlock
}

type overlayEntry struct {
	once sync.Once
	dir  string
	err  error
}

// fileRead is how the units of one file were read, for the report.
type fileRead struct {
	kbuild  map[string]string // tree name -> the object whose flags were used
	prelude string            // why the prelude was used ("" when it was not)
}

// CRead says, for one C file of the series, how verify read it.
type CRead struct {
	File string `json:"file"`
	// Via is "kbuild" when every unit of the file was the preprocessed
	// translation unit of a build tree, "prelude" when none was, "both"
	// when some were.
	Via string `json:"via"`
	// Trees are the configurations the kbuild units came from, each with
	// the object whose compile flags were used.
	Trees []CReadTree `json:"trees,omitempty"`
	// Why says why the prelude was used.
	Why string `json:"why,omitempty"`
}

// CReadTree is one build tree a file was read in.
type CReadTree struct {
	Config string `json:"config"`
	Flags  string `json:"flags_of"`
}

func newKbuildReader(ctx context.Context, trees []*Tree, cacheDir string) (*kbuildReader, error) {
	sweepOverlays()
	pruneCache(cacheDir)
	tmp, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", overlayPrefix, os.Getpid()))
	if err != nil {
		return nil, err
	}
	return &kbuildReader{ctx: ctx, trees: trees, tmp: tmp, cache: cacheDir, overlays: map[int]*overlayEntry{}, files: map[int]map[string][]byte{}, facts: map[string]*unitFacts{}, reads: map[string]*fileRead{}}, nil
}

func (kb *kbuildReader) close() { os.RemoveAll(kb.tmp) }

// overlayPrefix starts the names of the runs' overlay directories in the
// temporary directory, followed by the process ID.
const overlayPrefix = "kpatch-verify-"

// sweepOverlays removes the overlay directories of runs whose process is
// gone: a run stopped by Ctrl-C is abandoned (the process exits without
// waiting for it), and the next run cleans up after it.
func sweepOverlays() {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), overlayPrefix+"*"))
	for _, m := range matches {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(m), overlayPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(m)
		}
	}
}

// treeFor returns the build tree that stands for build e: the one named
// like it, else the first of its architecture, else the first.
func (kb *kbuildReader) treeFor(e Env) *Tree {
	for _, t := range kb.trees {
		if t.Name == e.Name && t.Arch == e.Arch {
			return t
		}
	}
	for _, t := range kb.trees {
		if t.Arch == e.Arch {
			return t
		}
	}
	return kb.trees[0] // a file the build trees read is read in them only
}

// noteKbuild and notePrelude record how a unit of path was read.
func (kb *kbuildReader) noteKbuild(path string, t *Tree, from string) {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	r := kb.read(path)
	r.kbuild[t.Name] = from
}

func (kb *kbuildReader) notePrelude(path, why string) {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	if r := kb.read(path); r.prelude == "" {
		r.prelude = why
	}
}

func (kb *kbuildReader) read(path string) *fileRead {
	r := kb.reads[path]
	if r == nil {
		r = &fileRead{kbuild: map[string]string{}}
		kb.reads[path] = r
	}
	return r
}

// cReads returns how each C file was read.
func (kb *kbuildReader) cReads() []CRead {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	var out []CRead
	for _, p := range sortedKeys(kb.reads) {
		r := kb.reads[p]
		cr := CRead{File: p, Why: r.prelude}
		for _, n := range sortedKeys(r.kbuild) {
			cr.Trees = append(cr.Trees, CReadTree{n, r.kbuild[n]})
		}
		switch {
		case len(cr.Trees) > 0 && r.prelude != "":
			cr.Via = "both"
		case len(cr.Trees) > 0:
			cr.Via = "kbuild"
		default:
			cr.Via = "prelude"
		}
		out = append(out, cr)
	}
	return out
}

// overlay returns a directory holding every file the series touches, as
// it is after patch at (the files absent then left out).
func (kb *kbuildReader) overlay(s Series, at int) (string, error) {
	kb.mu.Lock()
	ent := kb.overlays[at]
	if ent == nil {
		ent = &overlayEntry{}
		kb.overlays[at] = ent
	}
	kb.mu.Unlock()
	ent.once.Do(func() {
		ent.dir = filepath.Join(kb.tmp, fmt.Sprintf("at-%d", at))
		for p, c := range kb.overlayFiles(s, at) {
			f := filepath.Join(ent.dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				ent.err = err
				return
			}
			if err := os.WriteFile(f, c, 0o644); err != nil {
				ent.err = err
				return
			}
		}
	})
	return ent.dir, ent.err
}

// generatedDir is the directory of an overlay that stands for kbuild's
// arch/x86/include/generated: the asm-generic wrappers of the headers the
// series adds to mandatory-y.
const generatedDir = ".generated"

// overlayFiles returns the files laid over the trees' sources at patch
// at: every file the series touches, as it is then; the files an earlier
// kpatch test build laid over a tree (its .kpatch-overlay) that the series
// does not touch, as the base has them; and, for a header the series adds
// to include/asm-generic/Kbuild's mandatory-y that x86 does not have, the
// wrapper kbuild would generate (asm/X.h including asm-generic/X.h).
func (kb *kbuildReader) overlayFiles(s Series, at int) map[string][]byte {
	kb.mu.Lock()
	if f, ok := kb.files[at]; ok {
		kb.mu.Unlock()
		return f
	}
	kb.mu.Unlock()
	out := kb.overlayFilesAt(s, at)
	kb.mu.Lock()
	kb.files[at] = out
	kb.mu.Unlock()
	return out
}

func (kb *kbuildReader) overlayFilesAt(s Series, at int) map[string][]byte {
	out := map[string][]byte{}
	for _, p := range s.Paths() {
		if c, ok := s.FileAt(p, at); ok {
			out[p] = c
		}
	}
	if s.Tree() != nil {
		for _, t := range kb.trees {
			for _, p := range t.Laid() {
				if len(s.Changes(p)) > 0 {
					continue
				}
				if c, err := s.Tree().ReadFile(p); err == nil {
					out[p] = c
				}
			}
		}
	}
	kbuildFile, _ := s.FileAt("include/asm-generic/Kbuild", at)
	for _, p := range s.Paths() {
		if !s.Created(p) {
			continue
		}
		name, ok := strings.CutPrefix(p, "include/asm-generic/")
		if !ok || !strings.HasSuffix(name, ".h") || strings.Contains(name, "/") {
			continue
		}
		if _, ok := s.FileAt(p, at); !ok || !regexp.MustCompile(`(?m)^mandatory-y\s*\+=\s*`+regexp.QuoteMeta(name)+`\s*$`).Match(kbuildFile) {
			continue
		}
		if _, ok := s.FileAt("arch/x86/include/asm/"+name, at); ok {
			continue
		}
		out[generatedDir+"/asm/"+name] = []byte("#include <asm-generic/" + name + ">\n")
	}
	return out
}

// ppUnit is a preprocessed unit cut down for cc/v4: the file's own
// top-level chunks and the typedefs of the headers (each chunk after a
// #line naming where it comes from), and the function-like macros the
// file defines in that build.
type ppUnit struct {
	Text   string    `json:"text"`
	Chunks []ppChunk `json:"chunks"`
	Macros []ppMacro `json:"macros"`
}

// ppChunk is a chunk of ppUnit.Text: where it is in Text (lines), and
// where it comes from.
type ppChunk struct {
	File     string // the file it comes from
	Start    int    // its first line in Text
	End      int    // its last line in Text
	FromLine int    // its first line in File
	FromEnd  int    // its last line in File
	Fn       bool   // a function definition
	Name     string // the function's name
	OwnFile  bool   // File is the unit's file
}

// ppMacro is a function-like macro the file defines.
type ppMacro struct {
	Name   string   `json:"name"`
	Line   int      `json:"line"`
	Idents []string `json:"idents"`
}

// unitKey identifies what a kbuild unit of path (content text, after
// patch at) is made of: the tree, the command, the file and every file
// laid over the tree; factsVersion changes when what is made of them does.
func (kb *kbuildReader) unitKey(s Series, t *Tree, tc *treeCommand, path string, at int, text []byte) string {
	h := sha256.New()
	h.Write(t.Key)
	fmt.Fprintf(h, "\x00%s\x00%s\x00%s\x00", factsVersion, path, strings.Join(tc.cmd.Args, "\x01"))
	h.Write(text)
	files := kb.overlayFiles(s, at)
	for _, p := range sortedKeys(files) {
		fmt.Fprintf(h, "\x00%s\x00%d\x00", p, len(files[p]))
		h.Write(files[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// preprocess returns path (after patch at) preprocessed in tree t and cut
// down.
func (kb *kbuildReader) preprocess(s Series, t *Tree, tc *treeCommand, path string, at int, key string) (*ppUnit, error) {
	dir, err := kb.overlay(s, at)
	if err != nil {
		return nil, err
	}
	src := filepath.Join(dir, filepath.FromSlash(path))
	out := filepath.Join(kb.tmp, key+".i")
	defer os.Remove(out)
	args := tc.cmd.Preprocess(kbuild.PreprocessOptions{SrcTree: t.Src, Overlay: dir, Source: src, Rel: path, Output: out, KeepDefines: true,
		After: []string{filepath.Join(dir, generatedDir)}})
	cmd := exec.CommandContext(kb.ctx, args[0], args[1:]...)
	cmd.Dir = tc.cmd.Dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if kb.ctx.Err() != nil {
			return nil, kb.ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.Index(msg, "error:"); i >= 0 {
			msg = msg[i:]
		}
		msg, _, _ = strings.Cut(msg, "\n")
		return nil, fmt.Errorf("preprocessing with the flags of %s failed: %s", tc.from, strings.ReplaceAll(msg, dir+"/", ""))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return reducePreprocessed(b, path, []string{dir + "/", t.Src + "/"}), nil
}

var (
	markerRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"`) })
	ppDefineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#\s*define\s+([A-Za-z_]\w*)(\()?`) })
)

// reducePreprocessed cuts gcc's -E -dD output of path down to what cc/v4
// needs to parse the file's own code: its top-level chunks, whole, and of
// the headers only the typedefs (the names that parse as types); every
// chunk after a #line that gives its place, the markers inside chunks
// turned into #line, other directives blanked. File names lose the
// prefixes given (the overlay and the source tree). It also returns the
// function-like macros the file defines.
func reducePreprocessed(i []byte, path string, prefixes []string) *ppUnit {
	u := &ppUnit{}
	lines := bytes.Split(i, []byte("\n"))
	type place struct {
		file string
		line int
	}
	at := make([]place, len(lines)) // where each line of i comes from
	file, line := "", 1
	conv := make([][]byte, len(lines))
	for k, l := range lines {
		if len(l) > 0 && l[0] == '#' {
			if m := markerRE().FindSubmatch(l); m != nil {
				n, _ := strconv.Atoi(string(m[1]))
				file = string(m[2])
				for _, p := range prefixes {
					file = strings.TrimPrefix(file, p)
				}
				at[k] = place{file, line}
				line = n
				conv[k] = fmt.Appendf(nil, "#line %d %q", n, file)
				continue
			}
			if m := ppDefineRE().FindSubmatch(l); m != nil && file == path && m[2] != nil {
				rest := l[len(m[0]):]
				if j := bytes.IndexByte(rest, ')'); j >= 0 {
					rest = rest[j+1:]
				}
				var ids []string
				for _, w := range identWordRE().FindAll(CodeOnly(rest), -1) {
					if !(w[0] >= '0' && w[0] <= '9') {
						ids = append(ids, string(w))
					}
				}
				u.Macros = append(u.Macros, ppMacro{Name: string(m[1]), Line: line, Idents: ids})
			}
			at[k] = place{file, line}
			line++
			conv[k] = nil // other directives (-dD's, #pragma) blank
			continue
		}
		at[k] = place{file, line}
		line++
		conv[k] = l
	}
	text := bytes.Join(conv, []byte("\n"))
	// offsets of the starts of lines of text
	starts := make([]int, 0, len(conv)+1)
	off := 0
	for _, l := range conv {
		starts = append(starts, off)
		off += len(l) + 1
	}
	lineOf := func(o int) int { return sort.SearchInts(starts, o+1) - 1 } // 0-based
	var b strings.Builder
	outLine := 1
	last := 0
	for _, ch := range Chunks(text) {
		first := lineOf(ch.Start)
		own := at[first].file == path
		if !own && !isTypedef(text[ch.Start:ch.End]) {
			continue
		}
		from := starts[first]
		if from < last {
			from = ch.Start // a chunk that shares a line with the last one
		}
		seg := text[from:ch.End]
		fmt.Fprintf(&b, "#line %d %q\n", at[first].line, at[first].file)
		outLine++
		c := ppChunk{File: at[first].file, Start: outLine, FromLine: at[first].line, Fn: ch.Fn, Name: ch.Name, OwnFile: own}
		c.FromEnd = at[lineOf(ch.End-1)].line
		b.Write(seg)
		b.WriteByte('\n')
		outLine += bytes.Count(seg, []byte("\n")) + 1
		c.End = outLine - 1
		u.Chunks = append(u.Chunks, c)
		last = ch.End
	}
	u.Text = b.String()
	return u
}

// isTypedef reports whether a chunk is a typedef.
func isTypedef(c []byte) bool {
	c = bytes.TrimSpace(c)
	c = bytes.TrimSpace(bytes.TrimPrefix(c, []byte("__extension__")))
	return bytes.HasPrefix(c, []byte("typedef")) && len(c) > 7 && !isIdentByte(c[7])
}

// ccConfigs are the cc/v4 configurations of the kbuild units, by
// architecture: the host compiler's predefined macros, and cc/v4's
// builtins.
var ccConfigs sync.Map // arch -> *ccConfigEntry

type ccConfigEntry struct {
	once sync.Once
	cfg  *cc.Config
	err  error
}

func kbuildConfig(arch string) (*cc.Config, error) {
	v, _ := ccConfigs.LoadOrStore(arch, &ccConfigEntry{})
	e := v.(*ccConfigEntry)
	e.once.Do(func() {
		abi, err := cc.NewABI("linux", arch)
		if err != nil {
			e.err = err
			return
		}
		e.cfg = &cc.Config{ABI: abi}
		e.err = e.cfg.ApplyOptions()
	})
	return e.cfg, e.err
}

// kbuildPredefined is what cc/v4 needs before a preprocessed unit: its
// builtins (and the types they use), gcc's keywords spelled as macros.
func kbuildPredefined(bits int) string {
	size, ptrdiff := "unsigned long", "long"
	if bits == 32 {
		size, ptrdiff = "unsigned int", "int"
	}
	return fmt.Sprintf("#define __SIZE_TYPE__ %s\n#define __PTRDIFF_TYPE__ %s\n#define __WCHAR_TYPE__ int\n#define __UINT16_TYPE__ unsigned short\n#define __UINT32_TYPE__ unsigned int\n#define __UINT64_TYPE__ unsigned long long\n#define __signed__ signed\n", size, ptrdiff) + cc.Builtin
}

// parsePreprocessed parses pp with cc/v4; a chunk it cannot parse is
// left out and the parse tried again. Chunks of the file are recorded as
// failures; a header's typedef that fails is replaced by "typedef int
// NAME" so that the file's code still parses.
func parsePreprocessed(path string, t *Tree, pp *ppUnit) (*cc.AST, []Failure, error) {
	cfg, err := kbuildConfig(t.Arch)
	if err != nil {
		return nil, nil, err
	}
	pre := kbuildPredefined(t.Bits)
	lines := strings.Split(pp.Text, "\n")
	dropped := map[int]bool{}
	var failed []Failure
	for try := 0; ; try++ {
		var b strings.Builder
		for k, l := range lines {
			if k > 0 {
				b.WriteByte('\n')
			}
			if !dropped[k+1] {
				b.WriteString(l)
			}
		}
		ast, err := ccParse(cfg, []cc.Source{{Name: "<builtin>", Value: pre}, {Name: "<unit>", Value: b.String()}})
		if err == nil {
			return ast, failed, nil
		}
		if try > 200 {
			return nil, failed, err
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		m := cErrRE().FindStringSubmatch(first)
		if m == nil {
			return nil, failed, err
		}
		ln, _ := strconv.Atoi(m[2])
		var hit *ppChunk
		for k := range pp.Chunks {
			c := &pp.Chunks[k]
			if c.File == m[1] && ln >= c.FromLine && ln <= c.FromEnd && !dropped[c.Start] {
				hit = c
				break
			}
		}
		if hit == nil {
			return nil, failed, err
		}
		for l := hit.Start; l <= hit.End; l++ {
			dropped[l] = true
		}
		if hit.OwnFile {
			failed = append(failed, Failure{Fn: hit.Fn, Name: hit.Name, Start: hit.FromLine, Line: ln, Msg: ccSourceRE().ReplaceAllString(m[4], "")})
		}
	}
}

// kbuildUnit reads path (in, after or before a patch) as tree t compiles
// it, or returns why it cannot.
func (r *Reader) readKbuild(kb *kbuildReader, t *Tree, in *Input, path string) (*Unit, string) {
	s := r.s
	if !strings.HasSuffix(path, ".c") {
		return nil, "headers are read through the C files that include them"
	}
	full, ok := s.FileAt(path, in.at)
	if !ok || !bytes.Equal(full, in.text) {
		return nil, "its content is not known (give the base tree with --tree)"
	}
	tc := t.command(path)
	if tc.err != nil {
		return nil, tc.err.Error()
	}
	key := kb.unitKey(s, t, tc, path, in.at, full)
	u, why := kb.makeUnit(s, t, tc, path, in.at, full, key)
	if u == nil {
		return nil, why
	}
	u.Path, u.Text, u.Expanded = path, full, true
	for _, f := range u.Funcs {
		f.UnitPath, f.UnitText = path, full
	}
	u.keepOnly(in.Keep, s.Created(path))
	kb.noteKbuild(path, t, tc.from)
	return u, ""
}

// makeUnit returns the unit of key, kept or made now (preprocessed in t
// and parsed), or why it cannot be made; one goroutine makes a key at a
// time.
func (kb *kbuildReader) makeUnit(s Series, t *Tree, tc *treeCommand, path string, at int, full []byte, key string) (*Unit, string) {
	defer kb.lockUnit(key)()
	if u := kb.cached(key); u != nil {
		return u, ""
	}
	pp, err := kb.preprocess(s, t, tc, path, at, key)
	if err != nil {
		return nil, err.Error()
	}
	ast, failed, err := parsePreprocessed(path, t, pp)
	if err != nil {
		first, _, _ := strings.Cut(err.Error(), "\n")
		return nil, "cc/v4 could not parse the preprocessed unit: " + ccSourceRE().ReplaceAllString(first, "")
	}
	u := &Unit{Path: path, Text: full}
	u.collect(ast)
	u.addWritten()
	for _, m := range pp.Macros {
		u.Macros = append(u.Macros, Macro{Name: m.Name, Line: m.Line, Idents: m.Idents})
	}
	u.Failed = failed
	kb.store(key, u)
	return u, ""
}

// keepOnly drops, of a file the series edits, what the prelude's unit
// would not have read either: the definitions and declarations outside
// the chunks kept (the ones the series touches), so that the rules judge
// the series' code, not the file's.
func (u *Unit) keepOnly(keep []Chunk, whole bool) {
	if whole {
		return
	}
	in := func(line int) bool {
		for _, ch := range keep {
			if line >= ch.StartLine && line <= ch.EndLine {
				return true
			}
		}
		return false
	}
	var funcs []*Func
	for _, f := range u.Funcs {
		if in(f.Line) {
			funcs = append(funcs, f)
		}
	}
	u.Funcs = funcs
	filter := func(ds []Decl) []Decl {
		var out []Decl
		for _, d := range ds {
			if in(d.Line) {
				out = append(out, d)
			}
		}
		return out
	}
	u.Decls, u.Vars = filter(u.Decls), filter(u.Vars)
	var uses []Ref
	for _, r := range u.Uses {
		if in(r.Line) {
			uses = append(uses, r)
		}
	}
	u.Uses = uses
	var failed []Failure
	for _, f := range u.Failed {
		if in(f.Start) {
			failed = append(failed, f)
		}
	}
	u.Failed = failed
}

// addWritten adds to the calls and identifiers of u's functions (and its
// file-scope uses) the ones the source has as written, before the
// preprocessor expanded them: the rules speak of what the patch writes
// (current, local64_read(), instrumentation_end()), which the expanded
// unit has as what the headers make of it. A name already there on the
// same line is not added twice.
func (u *Unit) addWritten() {
	lines := strings.Split(string(CodeOnly(u.Text)), "\n")
	for _, fn := range u.Funcs {
		have := map[string]bool{}
		for _, r := range fn.Idents {
			have[fmt.Sprintf("%s:%d", r.Name, r.Line)] = true
		}
		haveCall := map[string]bool{}
		for _, r := range fn.Calls {
			haveCall[fmt.Sprintf("%s:%d", r.Name, r.Line)] = true
		}
		for l := fn.Open; l <= fn.End && l <= len(lines); l++ {
			writtenRefs(lines[l-1], l, func(r Ref, call bool) {
				k := fmt.Sprintf("%s:%d", r.Name, r.Line)
				if !have[k] {
					fn.Idents = append(fn.Idents, r)
					have[k] = true
				}
				if call && !haveCall[k] {
					fn.Calls = append(fn.Calls, r)
					haveCall[k] = true
				}
			})
		}
		byPos := func(rs []Ref) {
			sort.SliceStable(rs, func(i, j int) bool {
				return rs[i].Line < rs[j].Line || rs[i].Line == rs[j].Line && rs[i].Col < rs[j].Col
			})
		}
		byPos(fn.Calls)
		byPos(fn.Idents)
		fn.InstrEnd = nil
		for _, r := range fn.Calls {
			if r.Name == "instrumentation_end" {
				fn.InstrEnd = append(fn.InstrEnd, r.Line)
			}
		}
	}
}

// writtenRefs calls f with every identifier of a line of code (comments
// and strings blanked) that is not a keyword, a member name (after . or
// ->) or a struct, union or enum tag, and whether it is called.
func writtenRefs(line string, n int, f func(r Ref, call bool)) {
	if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") {
		return
	}
	prev := ""
	for i := 0; i < len(line); {
		ch := line[i]
		if !isIdentByte(ch) || ch >= '0' && ch <= '9' {
			if ch >= '0' && ch <= '9' { // a number, with its suffix
				for i < len(line) && isIdentByte(line[i]) {
					i++
				}
				prev = "0"
				continue
			}
			if ch != ' ' && ch != '\t' {
				prev = string(ch)
				if ch == '>' && i > 0 && line[i-1] == '-' {
					prev = "->"
				}
			}
			i++
			continue
		}
		j := i
		for j < len(line) && isIdentByte(line[j]) {
			j++
		}
		w := line[i:j]
		k := j
		for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
			k++
		}
		if !cKeywords[w] && !cWrittenSkip[w] && prev != "." && prev != "->" && prev != "struct" && prev != "union" && prev != "enum" {
			f(Ref{Name: w, Line: n, Col: i + 1}, k < len(line) && line[k] == '(')
		}
		prev = w
		i = j
	}
}

// cWrittenSkip are words that are not names a body uses.
var cWrittenSkip = map[string]bool{"defined": true, "typeof": true, "__typeof__": true, "_Bool": true, "bool": true,
	"true": true, "false": true, "NULL": true, "break": true, "continue": true, "default": true}
