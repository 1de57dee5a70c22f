package buildtest

import (
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/outdir"
)

// stateFile holds, in a configuration's build directory, what the build
// test remembers between runs.
const stateFile = "kpatch-buildtest.gob"

// state is what a configuration's build directory remembers.
type state struct {
	BaseKey      string              // the inputs of the full base build in Obj
	BaseWarnings map[string][]string // object -> keys of its warnings at the base
	BaseConfig   map[string]string   // the base's configuration
	BaseConfRaw  []byte              // its .config (BaseOnDemand)
	FinalKey     string              // the inputs of the full build at the series' end in Obj (BaseOnDemand)
	Lazy         lazyBase            // what was asked of the base (BaseOnDemand)
	Steps        map[string]stepRecord
	Paths        []string // dependency names interned by number
	Objects      map[string][]cacheEntry

	pathID map[string]int32
}

// stepRecord is the remembered result of one step whose inputs hashed to
// the key it is stored under.
type stepRecord struct {
	Cell   Cell
	W2     *Cell // the W=2 check's cell, in the configuration that runs it
	When   time.Time
	Config map[string]string // the configuration after the step
}

// cacheEntry is one remembered compile of an object.
type cacheEntry struct {
	Env    string  // what decides the command: configuration, compiler, flags, Makefile
	Deps   []int32 // the dependencies it recorded ("src:", "obj:", "abs:" paths, "cfg:" symbols)
	Sum    string  // hash of their contents and values when it was compiled
	Result objResult
}

// maxEntries is how many compiles of one object are remembered, the most
// recent first. It must exceed the number of distinct inputs an object
// takes over one run: each v11 column gives most objects seven (one per
// patch that changes a header everything includes), and with fewer
// entries than that, deriving a column again evicts, patch by patch, the
// entry the next patch needs (every object compiled again). Two revisions
// and an edited spec fit in 24.
const maxEntries = 24

func loadState(root string) *state {
	st := &state{}
	if f, err := os.Open(filepath.Join(root, stateFile)); err == nil {
		if gob.NewDecoder(f).Decode(st) != nil {
			st = &state{}
		}
		f.Close()
	}
	if st.Steps == nil {
		st.Steps = map[string]stepRecord{}
	}
	if st.Objects == nil {
		st.Objects = map[string][]cacheEntry{}
	}
	if st.BaseWarnings == nil {
		st.BaseWarnings = map[string][]string{}
	}
	st.forgetFailures()
	st.pathID = map[string]int32{}
	for i, p := range st.Paths {
		st.pathID[p] = int32(i)
	}
	return st
}

func (st *state) save(root string) error {
	if len(st.Steps) > 400 { // forget the oldest steps
		var oldest string
		for len(st.Steps) > 300 {
			var t time.Time
			for k, r := range st.Steps {
				if oldest == "" || r.When.Before(t) {
					oldest, t = k, r.When
				}
			}
			delete(st.Steps, oldest)
			oldest = ""
		}
	}
	// All at once (outdir.WriteFile): a run stopped while saving leaves
	// the previous state.
	return outdir.WriteFile(filepath.Join(root, stateFile), func(w io.Writer) error {
		return gob.NewEncoder(w).Encode(st)
	})
}

func (st *state) intern(p string) int32 {
	if id, ok := st.pathID[p]; ok {
		return id
	}
	id := int32(len(st.Paths))
	st.Paths = append(st.Paths, p)
	st.pathID[p] = id
	return id
}

// valuer gives the current content hash of a dependency name.
type valuer func(name string) string

func sumOf(names []string, ids []int32, val valuer) string {
	h := sha256.New()
	for _, id := range ids {
		n := names[id]
		io.WriteString(h, n)
		h.Write([]byte{0})
		io.WriteString(h, val(n))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// lookup returns the remembered result of obj if one of its compiles had
// the same environment and dependencies with the same contents.
func (st *state) lookup(obj, env string, val valuer) (*objResult, bool) {
	for _, e := range st.Objects[obj] {
		if e.Env == env && sumOf(st.Paths, e.Deps, val) == e.Sum {
			r := e.Result
			return &r, true
		}
	}
	return nil, false
}

// forgetFailures drops remembered failed compiles and failed steps. kbuild
// writes no dependency file for a compile that fails, so what a failure
// depended on is not known: remembered against the object's earlier
// dependencies, it would be served again after the header that caused it
// was fixed (a header the object did not include before). Earlier
// versions of kpatch remembered them; failures are cheap to compile again.
func (st *state) forgetFailures() {
	for obj, es := range st.Objects {
		kept := es[:0]
		for _, e := range es {
			if !e.Result.Failed {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			delete(st.Objects, obj)
		} else {
			st.Objects[obj] = kept
		}
	}
	for k, r := range st.Steps {
		if r.Cell.Status == Fail {
			delete(st.Steps, k)
		}
	}
}

// remember stores a successful compile of obj; failures are not
// remembered (see forgetFailures).
func (st *state) remember(obj, env string, deps []string, val valuer, r objResult) {
	if r.Failed {
		return
	}
	ids := make([]int32, len(deps))
	for i, d := range deps {
		ids[i] = st.intern(d)
	}
	e := cacheEntry{Env: env, Deps: ids, Sum: sumOf(st.Paths, ids, val), Result: r}
	old := st.Objects[obj]
	kept := []cacheEntry{e}
	for _, o := range old {
		if o.Sum != e.Sum || o.Env != e.Env {
			kept = append(kept, o)
		}
		if len(kept) == maxEntries {
			break
		}
	}
	st.Objects[obj] = kept
}

// fileHasher hashes files, remembering the hash while size and mtime stay.
type fileHasher struct {
	memo map[string]fileSum
}

type fileSum struct {
	size  int64
	mtime time.Time
	sum   string
}

func (h *fileHasher) sum(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "-"
	}
	if m, ok := h.memo[path]; ok && m.size == fi.Size() && m.mtime.Equal(fi.ModTime()) {
		return m.sum
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "-"
	}
	s := sha256.Sum256(b)
	sum := hex.EncodeToString(s[:16])
	h.memo[path] = fileSum{fi.Size(), fi.ModTime(), sum}
	return sum
}

// depNames turns a .cmd file's dependencies into names: "src:" for the
// source tree, "obj:" for the object tree, "abs:" for files elsewhere
// (the compiler's own headers), "cfg:" for configuration symbols.
func depNames(c *kbuild.CmdFile, src, obj string) []string {
	var out []string
	add := func(p string) {
		if !filepath.IsAbs(p) {
			p = filepath.Clean(filepath.Join(obj, p))
		}
		if r, err := filepath.Rel(src, p); err == nil && !strings.HasPrefix(r, "..") {
			out = append(out, "src:"+r)
		} else if r, err := filepath.Rel(obj, p); err == nil && !strings.HasPrefix(r, "..") {
			out = append(out, "obj:"+r)
		} else {
			out = append(out, "abs:"+p)
		}
	}
	if c.Source != "" {
		add(c.Source)
	}
	for _, d := range c.Deps {
		add(d)
	}
	for _, s := range c.Config {
		out = append(out, "cfg:"+s)
	}
	return out
}
