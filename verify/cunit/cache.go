package cunit

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The kbuild units a run parsed, kept between runs: what the rules read of
// a unit (its definitions, declarations, uses, macros and failures), by
// the key of everything it was made of (kbuildReader.unitKey), so that a
// second run on the same series and trees neither preprocesses nor parses.

// factsVersion is part of every key: change it when what a unit is made
// into changes (the cut, the parse, what collect reads).
const factsVersion = "facts-6"

// unitFacts is a Unit as kept on disk.
type unitFacts struct {
	Funcs  []funcFacts
	Decls  []cDeclFacts
	Vars   []cDeclFacts
	Uses   []cRefFacts
	Refs   []cRefFacts
	Macros []ppMacro
	Failed []failFacts
}

type funcFacts struct {
	Name                                  string
	Static, Inline, AlwaysInline, Noinstr bool
	Line, Start, Open, End                int
	Params                                [][2]string
	Calls, Idents                         []cRefFacts
	InstrEnd                              []int
	Locals                                [][2]string
	Compares                              []Compare
}

type cDeclFacts struct {
	Name          string
	Line          int
	Static, Const bool
}

type cRefFacts struct {
	Name      string
	Line, Col int
}

type failFacts struct {
	Fn          bool
	Name        string
	Start, Line int
	Msg         string
}

// convert maps xs with f; nil and empty give nil.
func convert[A, B any](xs []A, f func(A) B) []B {
	if len(xs) == 0 {
		return nil
	}
	out := make([]B, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func refsFacts(rs []Ref) []cRefFacts {
	return convert(rs, func(r Ref) cRefFacts { return cRefFacts{r.Name, r.Line, r.Col} })
}

func refsOf(fs []cRefFacts) []Ref {
	return convert(fs, func(r cRefFacts) Ref { return Ref{r.Name, r.Line, r.Col} })
}

func declsFacts(ds []Decl) []cDeclFacts {
	return convert(ds, func(d Decl) cDeclFacts { return cDeclFacts{d.Name, d.Line, d.Static, d.Const} })
}

func declsOf(fs []cDeclFacts) []Decl {
	return convert(fs, func(d cDeclFacts) Decl { return Decl{d.Name, d.Line, d.Static, d.Const} })
}

func factsOf(u *Unit) *unitFacts {
	f := &unitFacts{Decls: declsFacts(u.Decls), Vars: declsFacts(u.Vars), Uses: refsFacts(u.Uses), Refs: refsFacts(u.Refs)}
	for _, fn := range u.Funcs {
		ff := funcFacts{Name: fn.Name, Static: fn.Static, Inline: fn.Inline, AlwaysInline: fn.AlwaysInline, Noinstr: fn.Noinstr,
			Line: fn.Line, Start: fn.Start, Open: fn.Open, End: fn.End, Calls: refsFacts(fn.Calls), Idents: refsFacts(fn.Idents), InstrEnd: fn.InstrEnd}
		for _, p := range fn.Params {
			ff.Params = append(ff.Params, [2]string{p.Name, p.Type})
		}
		for _, p := range fn.Locals {
			ff.Locals = append(ff.Locals, [2]string{p.Name, p.Type})
		}
		ff.Compares = fn.Compares
		f.Funcs = append(f.Funcs, ff)
	}
	for _, m := range u.Macros {
		f.Macros = append(f.Macros, ppMacro{Name: m.Name, Line: m.Line, Idents: m.Idents})
	}
	for _, fl := range u.Failed {
		f.Failed = append(f.Failed, failFacts{fl.Fn, fl.Name, fl.Start, fl.Line, fl.Msg})
	}
	return f
}

func (f *unitFacts) unit() *Unit {
	u := &Unit{Decls: declsOf(f.Decls), Vars: declsOf(f.Vars), Uses: refsOf(f.Uses), Refs: refsOf(f.Refs)}
	for _, ff := range f.Funcs {
		fn := &Func{Name: ff.Name, Static: ff.Static, Inline: ff.Inline, AlwaysInline: ff.AlwaysInline, Noinstr: ff.Noinstr,
			Line: ff.Line, Start: ff.Start, Open: ff.Open, End: ff.End, Calls: refsOf(ff.Calls), Idents: refsOf(ff.Idents), InstrEnd: ff.InstrEnd}
		for _, p := range ff.Params {
			fn.Params = append(fn.Params, Param{p[0], p[1]})
		}
		for _, p := range ff.Locals {
			fn.Locals = append(fn.Locals, Param{p[0], p[1]})
		}
		fn.Compares = ff.Compares
		u.Funcs = append(u.Funcs, fn)
	}
	for _, m := range f.Macros {
		u.Macros = append(u.Macros, Macro{Name: m.Name, Line: m.Line, Idents: m.Idents})
	}
	for _, fl := range f.Failed {
		u.Failed = append(u.Failed, Failure{fl.Fn, fl.Name, fl.Start, fl.Line, fl.Msg})
	}
	return u
}

// cachePath is where the unit of key is kept, or "".
func (kb *kbuildReader) cachePath(key string) string {
	if kb.cache == "" {
		return ""
	}
	return filepath.Join(kb.cache, key[:2], key+".gob")
}

// cached returns the unit kept under key (in this run, or on disk), or
// nil.
func (kb *kbuildReader) cached(key string) *Unit {
	kb.mu.Lock()
	f := kb.facts[key]
	kb.mu.Unlock()
	if f != nil {
		return f.unit()
	}
	if f = readFacts(kb.cachePath(key)); f == nil {
		return nil
	}
	kb.mu.Lock()
	kb.facts[key] = f
	kb.mu.Unlock()
	return f.unit()
}

// store keeps u under key; a cache that cannot be written is only slower.
func (kb *kbuildReader) store(key string, u *Unit) {
	f := factsOf(u)
	kb.mu.Lock()
	kb.facts[key] = f
	kb.mu.Unlock()
	writeFacts(kb.cachePath(key), f)
}

// readFacts returns the unit facts kept at p ("": none), marking them
// used for pruneCache, or nil.
func readFacts(p string) *unitFacts {
	if p == "" {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	f := &unitFacts{}
	if gob.NewDecoder(bytes.NewReader(b)).Decode(f) != nil {
		return nil
	}
	now := time.Now()
	os.Chtimes(p, now, now) // used: kept by pruneCache
	return f
}

// writeFacts keeps f at p ("": nowhere), written whole: a temporary file
// renamed, so a reader sees the old file or the new one.
func writeFacts(p string, f *unitFacts) {
	if p == "" {
		return
	}
	var b bytes.Buffer
	if gob.NewEncoder(&b).Encode(f) != nil || os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", p, os.Getpid())
	if os.WriteFile(tmp, b.Bytes(), 0o644) != nil || os.Rename(tmp, p) != nil {
		os.Remove(tmp) // a full disk leaves no part of it
	}
}

// cacheAge is how long a kept unit no run has read stays in the cache.
const cacheAge = 30 * 24 * time.Hour

// pruneCache removes the units of dir that no run has read for cacheAge
// (the cache would otherwise keep every version of every file ever read),
// at most once a day: walking a cache of many units costs more than the
// rest of a run on a small series.
func pruneCache(dir string) {
	if dir == "" {
		return
	}
	stamp := filepath.Join(dir, ".pruned")
	if st, err := os.Stat(stamp); err == nil && time.Since(st.ModTime()) < pruneEvery {
		return
	}
	old := time.Now().Add(-cacheAge)
	matches, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.ModTime().Before(old) {
			os.Remove(m)
		}
	}
	if os.MkdirAll(dir, 0o755) == nil {
		os.WriteFile(stamp, nil, 0o644)
		now := time.Now()
		os.Chtimes(stamp, now, now)
	}
}

// pruneEvery is how often pruneCache walks the cache.
const pruneEvery = 24 * time.Hour

// The prelude's units are kept the same way when a run has a cache
// (Options.PreprocessCache): by parseUnit's key, the kpatch executable
// (its path, size and time: another build of kpatch parses afresh) and
// factsVersion, so that a second run of verify on the same series reads
// them instead of parsing again with cc/v4 (most of a run's CPU).

var executableID = sync.OnceValue(func() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	st, err := os.Stat(p)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s\x00%d\x00%d", p, st.Size(), st.ModTime().UnixNano())
})

// preludePath is where the prelude unit of key is kept in dir, or "".
func preludePath(dir, key string) string {
	id := executableID()
	if dir == "" || id == "" {
		return ""
	}
	h := sha256.Sum256([]byte(factsVersion + "\x00prelude\x00" + id + "\x00" + key))
	k := hex.EncodeToString(h[:])
	return filepath.Join(dir, k[:2], k+".gob")
}

// loadPreludeUnit returns the unit kept at p, or nil.
func loadPreludeUnit(p string) *Unit {
	if f := readFacts(p); f != nil {
		return f.unit()
	}
	return nil
}

// storePreludeUnit keeps u at p; a cache that cannot be written is only
// slower.
func storePreludeUnit(p string, u *Unit) { writeFacts(p, factsOf(u)) }
