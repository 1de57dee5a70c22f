package kbuild

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// CompileCommand is the compiler command kbuild ran for one object, as its
// .<object>.cmd file records it (the "savedcmd_<object> := ..." line, or
// "cmd_<object> := ..." before Linux 6.2).
type CompileCommand struct {
	Object string   // the object, relative to the object tree ("kernel/fork.o")
	Source string   // the source file as the command names it (absolute with O=)
	Args   []string // the compiler and its arguments, compiler wrappers (ccache, icecc, distcc) left out
	Dir    string   // the directory kbuild ran it in: the object tree
}

// compilerWrappers are commands that run the compiler named by their first
// argument: the compile is the rest of the line.
var compilerWrappers = map[string]bool{"ccache": true, "icecc": true, "distcc": true, "sccache": true}

// ReadCompileCommand reads the compile command of object (relative to the
// object tree obj, "kernel/fork.o") from obj/kernel/.fork.o.cmd.
func ReadCompileCommand(obj, object string) (*CompileCommand, error) {
	file := filepath.Join(obj, CmdPath(object))
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	c, err := ParseCompileCommand(b, object)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	c.Dir = obj
	return c, nil
}

// ParseCompileCommand reads the compile command of object from the text of
// its .cmd file: the shell command of its savedcmd_ (or cmd_) line up to
// the first ";" (what follows are objtool and other post-processing), the
// compiler wrappers left out.
func ParseCompileCommand(cmdFile []byte, object string) (*CompileCommand, error) {
	c := ParseCmdFile(object, cmdFile)
	line, source := c.Command, c.Source
	if line == "" {
		return nil, fmt.Errorf("no savedcmd_%s line", object)
	}
	args, err := SplitCommand(line)
	if err != nil {
		return nil, err
	}
	for len(args) > 1 && compilerWrappers[filepath.Base(args[0])] {
		args = args[1:]
	}
	if len(args) < 2 {
		return nil, fmt.Errorf("savedcmd_%s is not a compile command: %q", object, line)
	}
	if source == "" { // the last argument that is a C file
		for _, a := range args {
			if strings.HasSuffix(a, ".c") && !strings.HasPrefix(a, "-") {
				source = a
			}
		}
	}
	if source == "" {
		return nil, fmt.Errorf("savedcmd_%s names no source file", object)
	}
	return &CompileCommand{Object: object, Source: source, Args: args}, nil
}

// SplitCommand splits the first command of a shell command line into its
// words as sh would: quotes ('...' and "...") and backslashes removed,
// words separated by blanks, the command ending at the first unquoted
// ";", "&&", "||" or "|".
func SplitCommand(line string) ([]string, error) {
	var out []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			out = append(out, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == ' ' || ch == '\t':
			end()
		case ch == ';' || ch == '|' || ch == '&' && i+1 < len(line) && line[i+1] == '&':
			end()
			return out, nil
		case ch == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", line)
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case ch == '"':
			inWord = true
			for i++; ; i++ {
				if i >= len(line) {
					return nil, fmt.Errorf("unterminated \" in %q", line)
				}
				if line[i] == '"' {
					break
				}
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\", line[i+1]) >= 0 {
					i++
				}
				w.WriteByte(line[i])
			}
		case ch == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	end()
	return out, nil
}

// PreprocessOptions says how Preprocess rewrites a compile command.
type PreprocessOptions struct {
	// SrcTree is the source tree the command compiles from (the target of
	// the object tree's "source" link with O=, else the object tree).
	SrcTree string
	// Overlay is a directory laid over SrcTree: a header found in it
	// (at the same path relative to it) is read in place of SrcTree's,
	// for every #include the command's -I, -isystem and -include options
	// resolve inside SrcTree. "" for none.
	Overlay string
	// Source is the file to preprocess in place of the command's own
	// (a file of Overlay, for a file with a content of its own); its path
	// relative to SrcTree is Rel.
	Source, Rel string
	// Output is where the preprocessed unit is written.
	Output string
	// After are include directories searched after the command's own
	// (-I), e.g. for asm-generic wrappers kbuild would have generated.
	After []string
	// KeepDefines keeps the #define and #undef directives in the output
	// (gcc's -dD), so that the macros the file defines can be read.
	KeepDefines bool
}

// Preprocess returns the command that preprocesses o.Source the way c
// compiles its own source: the same compiler, options, include paths and
// forced includes, run in c.Dir, with -E in place of -c, no dependency
// file, the overlay's directories searched before the tree's, and the
// source's directory in the tree searched for quoted includes (kbuild adds
// it only with O=). The module names kbuild derives from the object
// (KBUILD_BASENAME and the like) are o.Rel's, so that a sibling's command
// serves a file kbuild never compiled.
func (c *CompileCommand) Preprocess(o PreprocessOptions) []string {
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(c.Dir, p)
	}
	inTree := func(p string) (string, bool) {
		r, err := filepath.Rel(o.SrcTree, abs(p))
		if err != nil || r == ".." || strings.HasPrefix(r, "../") {
			return "", false
		}
		return r, true
	}
	base := strings.TrimSuffix(filepath.Base(o.Rel), filepath.Ext(o.Rel))
	modfile := strings.TrimSuffix(o.Rel, filepath.Ext(o.Rel))
	out := []string{c.Args[0]}
	args := c.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		// options with a separate or joined path
		opt, val, sep := "", "", false
		for _, p := range []string{"-include", "-isystem", "-iquote", "-I"} {
			if a == p && i+1 < len(args) {
				opt, val, sep = p, args[i+1], true
				break
			}
			if strings.HasPrefix(a, p) && len(a) > len(p) && p == "-I" {
				opt, val = p, a[len(p):]
				break
			}
		}
		switch {
		case opt != "":
			if sep {
				i++
			}
			if r, ok := inTree(val); ok && o.Overlay != "" {
				ov := filepath.Join(o.Overlay, r)
				if opt == "-include" {
					if _, err := os.Stat(ov); err == nil {
						val = ov
					}
				} else {
					out = append(out, opt, ov)
				}
			}
			out = append(out, opt, val)
		case a == "-c" || a == "-S" || a == "-E":
		case a == "-o" && i+1 < len(args):
			i++
		case strings.HasPrefix(a, "-Wp,-MMD,") || strings.HasPrefix(a, "-Wp,-MD,") || a == "-MMD" || a == "-MD":
		case a == "-MF" || a == "-MT" || a == "-MQ":
			i++
		case strings.HasPrefix(a, "-DKBUILD_MODFILE="):
			out = append(out, `-DKBUILD_MODFILE="`+modfile+`"`)
		case strings.HasPrefix(a, "-DKBUILD_BASENAME="):
			out = append(out, `-DKBUILD_BASENAME="`+base+`"`)
		case strings.HasPrefix(a, "-DKBUILD_MODNAME="):
			out = append(out, `-DKBUILD_MODNAME="`+base+`"`)
		case strings.HasPrefix(a, "-D__KBUILD_MODNAME="):
			out = append(out, "-D__KBUILD_MODNAME=kmod_"+base)
		case !strings.HasPrefix(a, "-") && (a == c.Source || abs(a) == abs(c.Source)):
			// replaced by o.Source at the end
		default:
			out = append(out, a)
		}
	}
	if o.Overlay != "" {
		out = append(out, "-fmacro-prefix-map="+o.Overlay+"/=")
	}
	for _, d := range o.After {
		out = append(out, "-I", d)
	}
	out = append(out, "-iquote", filepath.Join(o.SrcTree, filepath.Dir(o.Rel)))
	out = append(out, "-E")
	if o.KeepDefines {
		out = append(out, "-dD")
	}
	return append(out, "-o", o.Output, o.Source)
}

// CompiledSources returns the C sources of the objects compiled in
// directory dir of the object tree obj (relative, "kernel"), by object,
// from the .cmd files there; nil when there are none.
func CompiledSources(obj, dir string) []string {
	matches, _ := filepath.Glob(filepath.Join(obj, dir, ".*.o.cmd"))
	var out []string
	for _, m := range matches {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "."), ".cmd")
		if strings.HasSuffix(name, ".mod.o") {
			continue
		}
		out = append(out, filepath.ToSlash(filepath.Join(dir, name)))
	}
	sort.Strings(out)
	return out
}
