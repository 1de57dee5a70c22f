package cunit

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/big"
	"path"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"modernc.org/cc/v4"

	"kpatch/internal/ktypes"
)

// Env is a build the C checks evaluate the series in: an ABI and the
// configuration options defined.
type Env struct {
	Name    string // "x86_64", "i386"
	Arch    string // cc/v4's: "amd64", "386"
	Bits    int    // BITS_PER_LONG
	On      bool   // the series' options enabled
	Defines []string
}

// seriesOptions are the options the series adds or depends on; "on"
// builds define them all, "off" builds none.
var seriesOptions = []string{"CONFIG_UNWIND_USER", "CONFIG_HAVE_UNWIND_USER_FP", "CONFIG_HAVE_UNWIND_USER_COMPAT_FP"}

// Envs returns the four builds: x86_64 and i386, options on and off.
// x86_64 with the options on also has IA32 emulation (the compat frame).
func Envs() []Env {
	var out []Env
	for _, on := range []bool{true, false} {
		x64 := Env{Name: "x86_64", Arch: "amd64", Bits: 64, On: on, Defines: []string{"CONFIG_X86", "CONFIG_X86_64", "CONFIG_64BIT"}}
		x32 := Env{Name: "i386", Arch: "386", Bits: 32, On: on, Defines: []string{"CONFIG_X86", "CONFIG_X86_32"}}
		if on {
			x64.Defines = append(x64.Defines, "CONFIG_IA32_EMULATION", "CONFIG_COMPAT")
			x64.Defines = append(x64.Defines, seriesOptions...)
			x32.Defines = append(x32.Defines, seriesOptions...)
		}
		out = append(out, x64, x32)
	}
	return out
}

// String names the build: "x86_64", "i386 (options off)".
func (e Env) String() string {
	if e.On {
		return e.Name
	}
	return e.Name + " (options off)"
}

// prelude is what the kernel headers the checks do not read would have
// given: the fixed-size types, the attributes, BIT() and BITS_PER_LONG for
// the build. cc/v4 wants __predefined_declarator in every translation unit.
func (e Env) prelude() string {
	return e.preludeDefines() + ktypes.Prelude(false) + `#define EXPORT_SYMBOL_GPL(x)
#define EXPORT_SYMBOL(x)
` + preludeTypes
}

// preludeDefines defines the build's options, BITS_PER_LONG, BIT() and the
// errno values the series uses.
func (e Env) preludeDefines() string {
	var b strings.Builder
	for _, d := range e.Defines {
		fmt.Fprintf(&b, "#define %s 1\n", d)
	}
	fmt.Fprintf(&b, "#define BITS_PER_LONG %d\n", e.Bits)
	// include/linux/kconfig.h's tests of an option, which headers use in
	// #if as often as #ifdef
	b.WriteString(`#define __ARG_PLACEHOLDER_1 0,
#define __take_second_arg(__ignored, val, ...) val
#define __is_defined(x) ___is_defined(x)
#define ___is_defined(val) ____is_defined(__ARG_PLACEHOLDER_##val)
#define ____is_defined(arg1_or_junk) __take_second_arg(arg1_or_junk 1, 0)
#define IS_ENABLED(option) __is_defined(option)
#define IS_BUILTIN(option) __is_defined(option)
#define IS_MODULE(option) 0
#define IS_REACHABLE(option) __is_defined(option)
`)
	b.WriteString(`#define BIT(nr) (1UL << (nr))
#define NULL ((void *)0)
#define ENOSYS 38
#define EBUSY 16
#define EINVAL 22
`)
	return b.String()
}

// preludeTypes are the kernel types the series' headers use beyond the
// basic ones of package ktypes: the atomic, local and list types.
const preludeTypes = `typedef long ssize_t;
typedef struct { long counter; } atomic_long_t;
typedef struct { int counter; } atomic_t;
typedef struct { atomic_long_t a; } local_t;
typedef struct { local_t a; } local64_t;
struct list_head { struct list_head *next, *prev; };
struct callback_head { struct callback_head *next; void (*func)(struct callback_head *head); };
`

// preludeTypeNames are the typedef names of preludeTypes.
var preludeTypeNames = func() map[string]bool {
	out := map[string]bool{"ssize_t": true, "atomic_long_t": true, "atomic_t": true, "local_t": true, "local64_t": true}
	for _, n := range ktypes.Names {
		out[n] = true
	}
	return out
}()

// cfs serves the headers of the tree at one patch to cc/v4: the ones the
// series creates with their content (function bodies left out), asm/ names
// the architecture lacks from asm-generic (as Kbuild's mandatory-y
// wrappers do), include/linux/sizes.h from the tree, and every other
// header empty.
type cfs struct {
	s      Series
	n      int
	noArch bool // serve the architecture's headers empty: the generic defaults
}

func (f cfs) Open(name string) (fs.File, error) {
	name = strings.TrimPrefix(path.Clean(name), "/")
	if strings.HasPrefix(name, "arch/x86/include/") && !strings.HasPrefix(name, "arch/x86/include/asm/") {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	content := f.header(name)
	return fstest.MapFS{name: &fstest.MapFile{Data: content, ModTime: time.Unix(0, 0)}}.Open(name)
}

func (f cfs) header(name string) []byte {
	if f.noArch && strings.HasPrefix(name, "arch/") {
		return nil
	}
	if f.s.Created(name) {
		if c, ok := f.s.FileAt(name, f.n); ok {
			return stripBodies(c)
		}
	}
	if strings.HasPrefix(name, "arch/x86/include/asm/") {
		g := "include/asm-generic/" + strings.TrimPrefix(name, "arch/x86/include/asm/")
		if f.s.Created(g) && !f.s.Created(name) {
			if c, ok := f.s.FileAt(g, f.n); ok {
				return stripBodies(c)
			}
		}
	}
	if name == "include/linux/sizes.h" {
		if c, ok := f.s.FileAt(name, f.n); ok {
			return c
		}
		return []byte("#define SZ_4K 0x00001000\n")
	}
	return nil
}

// config returns a cc/v4 configuration for e that reads headers from cfs.
func (r *Reader) config(n int, e Env, noArch bool) (*cc.Config, error) {
	abi, err := cc.NewABI("linux", e.Arch)
	if err != nil {
		return nil, err
	}
	cfg := &cc.Config{
		ABI:             abi,
		FS:              cfs{r.s, n, noArch},
		FSOnly:          true,
		Header:          true, // declarations only: bodies use what is not served
		IncludePaths:    []string{"arch/x86/include", "include"},
		SysIncludePaths: []string{"arch/x86/include", "include"},
	}
	if err := cfg.ApplyOptions(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Translate type checks src (named name) after the prelude, in e, with
// the tree at patch n, and then tail (declarations that evaluate things).
func (r *Reader) Translate(n int, e Env, name string, src []byte, tail string) (*cc.AST, error) {
	return r.TranslateWith(n, e, false, name, src, tail)
}

// TranslateWith is Translate, optionally with the architecture's headers
// served empty (noArch), to see the generic defaults of arch hooks.
func (r *Reader) TranslateWith(n int, e Env, noArch bool, name string, src []byte, tail string) (*cc.AST, error) {
	s := r.s
	body := stripBodies(src)
	// The same source, with the same series headers it includes, in the
	// same build, translates the same: share the result in the process
	// (the ASTs are only read).
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%v\x00%v\x00%s\x00%d\x00", e.String(), e.Defines, noArch, name, len(body))
	h.Write(body)
	fmt.Fprintf(h, "\x00%s\x00", tail)
	for _, inc := range r.includedHeaders(n, name, src) {
		c, _ := s.FileAt(inc, n)
		fmt.Fprintf(h, "\x00%s\x00%d\x00", inc, len(c))
		h.Write(c)
	}
	if s.Tree() != nil {
		fmt.Fprintf(h, "\x00tree %s %s %v", s.Tree().Dir, s.Tree().Base, s.Tree().Commit)
	}
	ent := sharedASTs.entry(string(h.Sum(nil)))
	ent.once.Do(func() {
		cfg, err := r.config(n, e, noArch)
		if err != nil {
			ent.err = err
			return
		}
		ent.ast, ent.err = ccTranslate(cfg, []cc.Source{
			{Name: "<prelude>", Value: e.prelude()},
			{Name: name, Value: body},
			{Name: "<verify>", Value: tail},
		})
	})
	return ent.ast, ent.err
}

// sharedASTs are translateWith's results in this process, emptied when
// they reach maxSharedUnits.
var sharedASTs = &astStore{m: map[string]*astEntry{}}

type astStore struct {
	mu sync.Mutex
	m  map[string]*astEntry
}

type astEntry struct {
	once sync.Once
	ast  *cc.AST
	err  error
}

func (st *astStore) entry(key string) *astEntry {
	st.mu.Lock()
	defer st.mu.Unlock()
	ent := st.m[key]
	if ent == nil {
		if len(st.m) >= maxSharedUnits {
			st.m = map[string]*astEntry{}
		}
		ent = &astEntry{}
		st.m[key] = ent
	}
	return ent
}

// Directives returns the preprocessor lines of a C file (its #includes,
// #defines and conditionals), other lines blank so that lines keep their
// numbers: what a .c file contributes to evaluating its macros.
func Directives(c []byte) []byte {
	lines := strings.Split(string(c), "\n")
	cont := false
	for i, l := range lines {
		keep := cont || strings.HasPrefix(strings.TrimSpace(l), "#")
		cont = keep && strings.HasSuffix(l, "\\")
		if !keep {
			lines[i] = ""
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// stripBodies replaces the body of every function definition with ";",
// keeping the lines: declarations are what the C checks need, and bodies
// use macros and statements of headers that are not served.
func stripBodies(c []byte) []byte {
	var b strings.Builder
	depth := 0
	last := byte(0) // the last non-blank byte outside bodies
	in := false     // inside a function body
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if in {
			switch ch {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					in = false
					b.WriteByte(';')
					last = ';'
					continue
				}
			case '\n':
				b.WriteByte('\n')
			}
			continue
		}
		if ch == '{' && last == ')' {
			in, depth = true, 1
			continue
		}
		if ch == '\n' {
			// a directive line ends at the newline; remember what ended
			// the last code line
			b.WriteByte(ch)
			continue
		}
		b.WriteByte(ch)
		if ch != ' ' && ch != '\t' && ch != '\r' {
			last = ch
		}
		if ch == '#' && lineStart(c, i) { // skip the directive
			j := i + 1
			for j < len(c) && (c[j] != '\n' || c[j-1] == '\\') {
				j++
			}
			b.Write(c[i+1 : j])
			i = j - 1
		}
	}
	return []byte(b.String())
}

func lineStart(c []byte, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch c[j] {
		case ' ', '\t':
			continue
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

// evalVar is the name of the variable that evaluates expression i.
func evalVar(i int) string { return fmt.Sprintf("__verify_%d", i) }

// EvalTail declares one unsigned long long per expression.
func EvalTail(exprs []string) string {
	var b strings.Builder
	for i, x := range exprs {
		fmt.Fprintf(&b, "unsigned long long %s = (%s);\n", evalVar(i), x)
	}
	return b.String()
}

// Values reads the constant values of evalTail's variables.
func Values(ast *cc.AST, n int) ([]uint64, error) {
	out := make([]uint64, n)
	found := make([]bool, n)
	for l := ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed == nil || ed.Case != cc.ExternalDeclarationDecl || ed.Declaration == nil {
			continue
		}
		for il := ed.Declaration.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
			id := il.InitDeclarator
			if id == nil || id.Declarator == nil || id.Initializer == nil || id.Initializer.AssignmentExpression == nil {
				continue
			}
			var i int
			if _, err := fmt.Sscanf(id.Declarator.Name(), "__verify_%d", &i); err != nil || i >= n {
				continue
			}
			switch v := id.Initializer.AssignmentExpression.Value().(type) {
			case cc.Int64Value:
				out[i] = uint64(v)
			case cc.UInt64Value:
				out[i] = uint64(v)
			default:
				return nil, fmt.Errorf("%v: not an integer constant (%T)", id.Initializer.Position(), v)
			}
			found[i] = true
		}
	}
	for i, ok := range found {
		if !ok {
			return nil, fmt.Errorf("expression %d not evaluated", i)
		}
	}
	return out, nil
}

// Functions returns the functions declared in file name of ast: name ->
// type and line.
func Functions(ast *cc.AST, name string) map[string]FuncType {
	out := map[string]FuncType{}
	for l := ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed == nil {
			continue
		}
		var ds []*cc.Declarator
		switch ed.Case {
		case cc.ExternalDeclarationFuncDef:
			ds = append(ds, ed.FunctionDefinition.Declarator)
		case cc.ExternalDeclarationDecl:
			if ed.Declaration == nil {
				continue
			}
			for il := ed.Declaration.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
				if il.InitDeclarator != nil {
					ds = append(ds, il.InitDeclarator.Declarator)
				}
			}
		}
		for _, d := range ds {
			if d == nil || d.Type() == nil || d.Type().Kind() != cc.Function || d.IsTypename() {
				continue
			}
			pos := d.Position()
			if pos.Filename != name {
				continue
			}
			typ := d.Type().String()
			if ft, ok := d.Type().(*cc.FunctionType); ok {
				typ = fmt.Sprintf("%s returning %s", typ, ft.Result())
			}
			out[d.Name()] = FuncType{Type: typ, Line: pos.Line, Static: d.IsStatic()}
		}
	}
	return out
}

// FuncType is a function's type as cc/v4 prints it, and where it is.
type FuncType struct {
	Type   string
	Line   int
	Static bool
}

// IntType is an integer type as cc/v4's ABI sizes it in one build.
type IntType struct {
	Signed bool
	Bits   int
}

// Min and Max are the values of t.
func (t IntType) Min() *big.Int {
	if !t.Signed {
		return big.NewInt(0)
	}
	return new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), uint(t.Bits-1)))
}

func (t IntType) Max() *big.Int {
	n := t.Bits
	if t.Signed {
		n--
	}
	return new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(n)), big.NewInt(1))
}

type intTypesEntry struct {
	once sync.Once
	x, k IntType
	ok   bool
}

var intTypes sync.Map // "env\x00typ\x00const" -> *intTypesEntry

// IntTypes returns, in e with the series' headers at patch n, the integer
// type typ (a declaration's specifiers, "unsigned long", "u32") and the
// type of the integer constant c as C gives it ("0" int, "0x80000000"
// unsigned int, "1UL" unsigned long); ok is false when either is not an
// integer type cc/v4 knows there (a typedef of a header it does not read).
func (r *Reader) IntTypes(n int, e Env, typ, c string) (x, k IntType, ok bool) {
	key := e.String() + "\x00" + typ + "\x00" + strings.TrimPrefix(c, "-")
	v, _ := intTypes.LoadOrStore(key, &intTypesEntry{})
	ent := v.(*intTypesEntry)
	ent.once.Do(func() {
		src := fmt.Sprintf("%s __verify_x;\n__typeof__(%s) __verify_c;\n", typ, strings.TrimPrefix(c, "-"))
		ast, err := r.Translate(n, e, "<compare>", nil, src)
		if err != nil {
			return
		}
		got := map[string]IntType{}
		for l := ast.TranslationUnit; l != nil; l = l.TranslationUnit {
			ed := l.ExternalDeclaration
			if ed == nil || ed.Case != cc.ExternalDeclarationDecl || ed.Declaration == nil {
				continue
			}
			for il := ed.Declaration.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
				d := il.InitDeclarator.Declarator
				if d == nil || d.Type() == nil || !cc.IsIntegerType(d.Type()) {
					continue
				}
				got[d.Name()] = IntType{Signed: cc.IsSignedInteger(d.Type()), Bits: int(d.Type().Size()) * 8}
			}
		}
		x, xok := got["__verify_x"]
		k, kok := got["__verify_c"]
		if xok && kok && x.Bits > 0 && k.Bits > 0 {
			ent.x, ent.k, ent.ok = x, k, true
		}
	})
	return ent.x, ent.k, ent.ok
}

// ConstValue returns the value of the integer constant c (decimal, hex,
// octal or binary, any suffix, "-" before it) in its type k, as C
// computes it: "-1" is -1 in int, "-1U" is 4294967295.
func ConstValue(c string, k IntType) (*big.Int, bool) {
	neg := strings.HasPrefix(c, "-")
	s := strings.TrimRight(strings.TrimPrefix(c, "-"), "uUlL")
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case strings.HasPrefix(s, "0b") || strings.HasPrefix(s, "0B"):
		base, s = 2, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	v, ok := new(big.Int).SetString(s, base)
	if !ok {
		return nil, false
	}
	if neg {
		v.Neg(v)
	}
	return Convert(v, k), true
}

// Convert returns v converted to t, as C converts an integer: modulo 2^bits
// for an unsigned type, into the signed range for a signed one.
func Convert(v *big.Int, t IntType) *big.Int {
	mod := new(big.Int).Lsh(big.NewInt(1), uint(t.Bits))
	r := new(big.Int).Mod(v, mod)
	if t.Signed && r.Cmp(t.Max()) > 0 {
		r.Sub(r, mod)
	}
	return r
}
