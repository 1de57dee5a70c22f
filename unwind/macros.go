package unwind

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"testing/fstest"
	"time"

	"modernc.org/cc/v4"

	"kpatch/internal/ktypes"
)

// MacroEnv is the build a header's frame macros are evaluated for.
type MacroEnv struct {
	// Arch is the C ABI: "amd64" (sizeof(long) = 8) or "386"
	// (sizeof(long) = 4).
	Arch string
	// Defines are the macros defined (to 1) before the header, such as
	// the CONFIG_ options its #ifdefs test.
	Defines []string
}

// X86_64Env is an x86_64 kernel with CONFIG_IA32_EMULATION, the build in
// which arch/x86/include/asm/unwind_user.h defines both frames.
var X86_64Env = MacroEnv{
	Arch:    "amd64",
	Defines: []string{"CONFIG_X86_64", "CONFIG_64BIT", "CONFIG_IA32_EMULATION", "CONFIG_COMPAT"},
}

// ParseFrameMacros evaluates the frame macros a header such as
// arch/x86/include/asm/unwind_user.h defines, in X86_64Env. See
// ParseFrameMacrosEnv.
func ParseFrameMacros(header []byte) (map[string]Frame, error) {
	return ParseFrameMacrosEnv(header, X86_64Env)
}

// frameMacro matches the #define of an object-like ARCH_INIT_USER_*_FRAME
// macro.
var frameMacro = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+(ARCH_INIT_USER_[A-Z0-9_]*FRAME)\b([^(]|$)`)

// ParseFrameMacrosEnv evaluates, as C compiled for env, every
// ARCH_INIT_USER_*_FRAME macro (ARCH_INIT_USER_FP_FRAME,
// ARCH_INIT_USER_COMPAT_FP_FRAME) that header defines, and returns the
// struct unwind_user_frame each one initializes, by macro name. Macros
// that env's configuration leaves undefined (behind a false #ifdef) are
// absent from the map; a macro defined empty gives a zero Frame.
//
// The header is run through modernc.org/cc/v4's preprocessor with its
// #include files empty, so only its own definitions count. Each macro's
// expansion then becomes the initializer of a struct unwind_user_frame
// (s32 cfa_off, ra_off, fp_off; bool use_fp) in a C translation unit
// that cc/v4 type checks and evaluates for env's ABI, with the kernel's
// s8..u64 types, bool, true and false. Errors carry the position in the
// header ("unwind_user.h:7:2: ...").
func ParseFrameMacrosEnv(header []byte, env MacroEnv) (map[string]Frame, error) {
	abi, err := cc.NewABI("linux", env.Arch)
	if err != nil {
		return nil, fmt.Errorf("frame macros: %v", err)
	}
	var names []string
	seen := map[string]bool{}
	for _, m := range frameMacro.FindAllSubmatch(header, -1) {
		if n := string(m[1]); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("frame macros: header defines no object-like ARCH_INIT_USER_*_FRAME macro")
	}
	sort.Strings(names)

	// Stage 1: expand each macro.
	var pre strings.Builder
	for _, d := range env.Defines {
		fmt.Fprintf(&pre, "#define %s 1\n", d)
	}
	var post strings.Builder
	for i, n := range names {
		fmt.Fprintf(&post, "\n__kpatch_frame_begin_%d %s __kpatch_frame_end_%d\n", i, n, i)
	}
	cfg := newCCConfig(abi)
	var out bytes.Buffer
	err = cc.Preprocess(cfg, []cc.Source{
		{Name: "<defines>", Value: pre.String()},
		{Name: "unwind_user.h", Value: string(header)},
		{Name: "<frames>", Value: post.String()},
	}, &out)
	if err != nil {
		return nil, fmt.Errorf("frame macros: %v", err)
	}
	text := out.String()
	expansions := map[string]string{}
	for i, n := range names {
		begin := fmt.Sprintf("__kpatch_frame_begin_%d", i)
		end := fmt.Sprintf("__kpatch_frame_end_%d", i)
		b := strings.Index(text, begin)
		e := strings.Index(text, end)
		if b < 0 || e < b {
			return nil, fmt.Errorf("frame macros: cannot find the expansion of %s", n)
		}
		exp := strings.TrimSpace(text[b+len(begin) : e])
		if exp == n {
			continue // not defined in this configuration
		}
		expansions[n] = exp
	}

	// Stage 2: evaluate the expansions as initializers.
	var tu strings.Builder
	tu.WriteString(kernelTypes)
	var evaluated []string
	for _, n := range names {
		exp, ok := expansions[n]
		if !ok {
			continue
		}
		evaluated = append(evaluated, n)
		fmt.Fprintf(&tu, "struct unwind_user_frame %s = {\n#line 1 \"%s\"\n%s\n};\n", varName(n), n, exp)
	}
	frames := map[string]Frame{}
	if len(evaluated) == 0 {
		return frames, nil
	}
	ast, err := cc.Translate(cfg, []cc.Source{{Name: "<frames.c>", Value: tu.String()}})
	if err != nil {
		return nil, fmt.Errorf("frame macros: %v", err)
	}
	inits := map[string]*cc.InitializerList{}
	for l := ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed == nil || ed.Case != cc.ExternalDeclarationDecl || ed.Declaration == nil {
			continue
		}
		for il := ed.Declaration.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
			id := il.InitDeclarator
			if id == nil || id.Declarator == nil || id.Initializer == nil {
				continue
			}
			inits[id.Declarator.Name()] = id.Initializer.InitializerList
		}
	}
	for _, n := range evaluated {
		f, err := frameValue(n, inits[varName(n)])
		if err != nil {
			return nil, err
		}
		frames[n] = f
	}
	return frames, nil
}

func varName(macro string) string { return "__kpatch_" + strings.ToLower(macro) }

// kernelTypes declares what the kernel's frame macros may use: the prelude
// shared with package verify (package ktypes) and the frame structure.
var kernelTypes = ktypes.Prelude(false) + `struct unwind_user_frame {
	s32 cfa_off;
	s32 ra_off;
	s32 fp_off;
	bool use_fp;
};
`

// frameValue reads the constant values an initializer list gives the
// fields of struct unwind_user_frame.
func frameValue(name string, l *cc.InitializerList) (Frame, error) {
	var f Frame
	for ; l != nil; l = l.InitializerList {
		in := l.Initializer
		if in == nil {
			continue
		}
		fld := in.Field()
		if fld == nil {
			return f, fmt.Errorf("frame macros: %v: %s: initializer for no field of struct unwind_user_frame", in.Position(), name)
		}
		if in.AssignmentExpression == nil {
			return f, fmt.Errorf("frame macros: %v: %s: .%s is not a scalar initializer", in.Position(), name, fld.Name())
		}
		v, err := intValue(in.AssignmentExpression.Value())
		if err != nil {
			return f, fmt.Errorf("frame macros: %v: %s: .%s: %v", in.Position(), name, fld.Name(), err)
		}
		switch fld.Name() {
		case "cfa_off":
			f.CFAOff = int32(v)
		case "ra_off":
			f.RAOff = int32(v)
		case "fp_off":
			f.FPOff = int32(v)
		case "use_fp":
			f.UseFP = v != 0
		}
	}
	return f, nil
}

func intValue(v cc.Value) (int64, error) {
	switch x := v.(type) {
	case cc.Int64Value:
		return int64(x), nil
	case cc.UInt64Value:
		return int64(x), nil
	case *cc.ZeroValue:
		return 0, nil
	}
	return 0, fmt.Errorf("not an integer constant expression (%T)", v)
}

// newCCConfig returns a cc/v4 configuration that reads nothing from the
// host: every #include resolves to an empty file.
func newCCConfig(abi *cc.ABI) *cc.Config {
	cfg := &cc.Config{
		ABI:             abi,
		FS:              emptyIncludes{},
		FSOnly:          true,
		IncludePaths:    []string{"include"},
		SysIncludePaths: []string{"include"},
	}
	if err := cfg.ApplyOptions(); err != nil {
		panic(err) // no options: cannot fail
	}
	return cfg
}

// emptyIncludes is a file system in which every file exists and is empty.
type emptyIncludes struct{}

// Open returns an empty file for any name.
func (emptyIncludes) Open(name string) (fs.File, error) {
	return fstest.MapFS{name: &fstest.MapFile{ModTime: time.Unix(0, 0)}}.Open(name)
}

// CheckX86Frames evaluates header's frame macros in X86_64Env and returns
// an error unless ARCH_INIT_USER_FP_FRAME equals FrameX86_64 and
// ARCH_INIT_USER_COMPAT_FP_FRAME equals FrameX86Compat: the check that the
// walker and the C a template emits describe the same frames.
func CheckX86Frames(header []byte) error { return checkX86Frames(header, true) }

// CheckX86Frame64 is CheckX86Frames for a revision without compat
// unwinding: ARCH_INIT_USER_FP_FRAME must equal FrameX86_64 and
// ARCH_INIT_USER_COMPAT_FP_FRAME must not be defined.
func CheckX86Frame64(header []byte) error { return checkX86Frames(header, false) }

func checkX86Frames(header []byte, compat bool) error {
	frames, err := ParseFrameMacros(header)
	if err != nil {
		return err
	}
	var errs []error
	if _, ok := frames["ARCH_INIT_USER_COMPAT_FP_FRAME"]; ok && !compat {
		errs = append(errs, fmt.Errorf("header defines ARCH_INIT_USER_COMPAT_FP_FRAME in a revision without compat unwinding"))
	}
	want := []struct {
		name string
		want Frame
	}{
		{"ARCH_INIT_USER_FP_FRAME", FrameX86_64},
		{"ARCH_INIT_USER_COMPAT_FP_FRAME", FrameX86Compat},
	}
	if !compat {
		want = want[:1]
	}
	for _, w := range want {
		got, ok := frames[w.name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("header does not define %s for x86_64 with CONFIG_IA32_EMULATION", w.name))
		case got != w.want:
			errs = append(errs, fmt.Errorf("header's %s is %v, the walker uses %v", w.name, got, w.want))
		}
	}
	return errors.Join(errs...)
}

// CheckX86WordSizeFrames is CheckX86Frames for Linux 6.19's header, whose
// frames are function-like macros of the word size:
// ARCH_INIT_USER_FP_FRAME(ws) must equal FrameX86_64 for ws = sizeof(long)
// and FrameX86Compat for ws = sizeof(int), and
// ARCH_INIT_USER_FP_ENTRY_FRAME(ws) X86EntryFrame(ws) for both, evaluated
// in X86_64Env with CONFIG_HAVE_UNWIND_USER_FP (6.19 guards the header
// with it). A header without the entry frame (before ae25884ad749) is
// checked for the frame-pointer frame alone when entry is false.
func CheckX86WordSizeFrames(header []byte, entry bool) error {
	probes := []struct {
		name, expr string
		want       Frame
	}{
		{"ARCH_INIT_USER_W8_FP_FRAME", "ARCH_INIT_USER_FP_FRAME(sizeof(long))", FrameX86_64},
		{"ARCH_INIT_USER_W4_FP_FRAME", "ARCH_INIT_USER_FP_FRAME(sizeof(int))", FrameX86Compat},
		{"ARCH_INIT_USER_W8_ENTRY_FRAME", "ARCH_INIT_USER_FP_ENTRY_FRAME(sizeof(long))", X86EntryFrame(8)},
		{"ARCH_INIT_USER_W4_ENTRY_FRAME", "ARCH_INIT_USER_FP_ENTRY_FRAME(sizeof(int))", X86EntryFrame(4)},
	}
	if !entry {
		probes = probes[:2]
	}
	h := append([]byte(nil), header...)
	for _, p := range probes {
		macro := strings.SplitN(p.expr, "(", 2)[0]
		h = fmt.Appendf(h, "\n#ifdef %s\n#define %s %s\n#endif\n", macro, p.name, p.expr)
	}
	env := X86_64Env
	env.Defines = append(append([]string(nil), env.Defines...), "CONFIG_HAVE_UNWIND_USER_FP")
	frames, err := ParseFrameMacrosEnv(h, env)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range probes {
		got, ok := frames[p.name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("header does not define %s", strings.SplitN(p.expr, "(", 2)[0]))
		case got != p.want:
			errs = append(errs, fmt.Errorf("header's %s is %v, the walker uses %v", p.expr, got, p.want))
		}
	}
	return errors.Join(errs...)
}
