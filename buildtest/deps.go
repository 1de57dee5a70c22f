package buildtest

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CmdFile is what kbuild records in <obj>/.foo.o.cmd after compiling foo.o.
type CmdFile struct {
	Object  string   // "kernel/fork.o", relative to the object tree
	Command string   // the compile command (savedcmd_/cmd_)
	Source  string   // the source file as recorded (source_)
	Deps    []string // dependency files as recorded (absolute, or relative to the object tree)
	Config  []string // configuration symbols the object depends on (include/config/SYM)

	names []string // depNames, once
}

// ParseCmd parses a kbuild .cmd file of object obj.
func ParseCmd(obj string, data []byte) *CmdFile {
	c := &CmdFile{Object: obj}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	inDeps := false
	for sc.Scan() {
		l := sc.Text()
		if inDeps {
			t := strings.TrimSpace(strings.TrimSuffix(l, "\\"))
			if strings.HasPrefix(t, "$(wildcard ") {
				p := strings.TrimSuffix(strings.TrimPrefix(t, "$(wildcard "), ")")
				if sym, ok := strings.CutPrefix(p, "include/config/"); ok {
					c.Config = append(c.Config, sym)
				}
			} else if t != "" {
				c.Deps = append(c.Deps, t)
			}
			if !strings.HasSuffix(l, "\\") {
				inDeps = false
			}
			continue
		}
		k, v, ok := strings.Cut(l, " := ")
		if !ok {
			continue
		}
		switch {
		case k == "savedcmd_"+obj || k == "cmd_"+obj:
			c.Command = v
		case k == "source_"+obj:
			c.Source = strings.TrimSpace(v)
		case k == "deps_"+obj:
			inDeps = strings.HasSuffix(l, "\\")
			if t := strings.TrimSpace(strings.TrimSuffix(v, "\\")); t != "" {
				c.Deps = append(c.Deps, t)
			}
		}
	}
	return c
}

// cmdPath returns the .cmd file of an object: kernel/fork.o ->
// kernel/.fork.o.cmd.
func cmdPath(obj string) string {
	return filepath.Join(filepath.Dir(obj), "."+filepath.Base(obj)+".cmd")
}

// ReadCmd reads the .cmd file of obj in the object tree objDir; nil if
// the object was never compiled there.
func ReadCmd(objDir, obj string) *CmdFile {
	data, err := os.ReadFile(filepath.Join(objDir, cmdPath(obj)))
	if err != nil {
		return nil
	}
	c := ParseCmd(obj, data)
	if c.Source == "" || !strings.HasSuffix(c.Source, ".c") {
		return nil
	}
	return c
}

// ScanObjects reads the .cmd file of every object compiled from a C file
// in objDir.
func ScanObjects(objDir string) (map[string]*CmdFile, error) {
	out := map[string]*CmdFile{}
	err := filepath.WalkDir(objDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "source" || n == "scripts" || n == "tools" || n == "usr" {
				return filepath.SkipDir
			}
			return nil
		}
		n := d.Name()
		if !strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".o.cmd") {
			return nil
		}
		rel, _ := filepath.Rel(objDir, filepath.Dir(p))
		obj := filepath.Join(rel, strings.TrimSuffix(strings.TrimPrefix(n, "."), ".cmd"))
		if c := ReadCmd(objDir, obj); c != nil {
			out[obj] = c
		}
		return nil
	})
	return out, err
}

// ArchivedObjects returns the objects kbuild put into a built-in.a or
// lib.a of objDir: the ordinary obj-y and lib-y objects, compiled by
// kbuild's standard rule. Objects outside them (the vDSO's, the real-mode
// trampoline's, the boot code's) are built by rules of their own, with
// flags a single-target build would not give them, so they are not
// compiled per patch.
func ArchivedObjects(objDir string) (map[string]bool, error) {
	out := map[string]bool{}
	err := filepath.WalkDir(objDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "source" || n == "scripts" || n == "tools" || n == "usr" {
				return filepath.SkipDir
			}
			return nil
		}
		if n := d.Name(); n != ".built-in.a.cmd" && n != ".lib.a.cmd" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, o := range archiveMembers(string(data)) {
			out[o] = true
		}
		return nil
	})
	return out, err
}

// archiveMembers reads the members of an archive from its .cmd file:
// `printf "kernel/%s " fork.o exit.o ... | xargs ar cDPrST kernel/built-in.a`.
func archiveMembers(cmd string) []string {
	var out []string
	for _, l := range strings.Split(cmd, "\n") {
		_, rest, ok := strings.Cut(l, `printf "`)
		if !ok {
			continue
		}
		prefix, rest, ok := strings.Cut(rest, `%s " `)
		if !ok {
			continue
		}
		list, _, _ := strings.Cut(rest, "|")
		for _, f := range strings.Fields(list) {
			if strings.HasSuffix(f, ".o") {
				out = append(out, prefix+f)
			}
		}
	}
	return out
}
