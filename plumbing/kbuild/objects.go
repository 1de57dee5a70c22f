package kbuild

import (
	"bytes"
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
}

// ParseCmdFile parses the .cmd file kbuild wrote for object obj
// ("kernel/fork.o"): its compile command (savedcmd_, or cmd_ before Linux
// 6.2), source_ and the deps_ list fixdep wrote, whose $(wildcard
// include/config/SYM) entries are the configuration symbols it depends on.
// The file is in memory: its lines are looked at in place (the deps_
// lines are thousands), split as bufio.ScanLines splits them (a final
// "\r" dropped).
func ParseCmdFile(obj string, data []byte) *CmdFile {
	c := &CmdFile{Object: obj}
	cmdKeys := [][]byte{[]byte("savedcmd_" + obj + " := "), []byte("cmd_" + obj + " := ")}
	sourceKey := []byte("source_" + obj + " := ")
	depsKey := []byte("deps_" + obj + " := ")
	inDeps := false
	for rest := data; len(rest) > 0; {
		l := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		l = bytes.TrimSuffix(l, []byte("\r"))
		if inDeps {
			cont := bytes.HasSuffix(l, []byte("\\"))
			t := string(bytes.TrimSpace(bytes.TrimSuffix(l, []byte("\\"))))
			if p, ok := strings.CutPrefix(t, "$(wildcard "); ok {
				if sym, ok := strings.CutPrefix(strings.TrimSuffix(p, ")"), "include/config/"); ok {
					c.Config = append(c.Config, sym)
				}
			} else if t != "" {
				c.Deps = append(c.Deps, t)
			}
			inDeps = cont
			continue
		}
		switch {
		case c.Command == "" && bytes.HasPrefix(l, cmdKeys[0]):
			c.Command = string(l[len(cmdKeys[0]):])
		case c.Command == "" && bytes.HasPrefix(l, cmdKeys[1]):
			c.Command = string(l[len(cmdKeys[1]):])
		case bytes.HasPrefix(l, sourceKey):
			c.Source = strings.TrimSpace(string(l[len(sourceKey):]))
		case bytes.HasPrefix(l, depsKey):
			v := l[len(depsKey):]
			inDeps = bytes.HasSuffix(v, []byte("\\"))
			if t := bytes.TrimSpace(bytes.TrimSuffix(v, []byte("\\"))); len(t) > 0 {
				c.Deps = append(c.Deps, string(t))
			}
		}
	}
	return c
}

// CmdPath returns the .cmd file of an object: kernel/fork.o ->
// kernel/.fork.o.cmd.
func CmdPath(obj string) string {
	return filepath.Join(filepath.Dir(obj), "."+filepath.Base(obj)+".cmd")
}

// ReadCmdFile reads the .cmd file of obj in the object tree objDir; nil
// if the object was never compiled there from a C file.
func ReadCmdFile(objDir, obj string) *CmdFile {
	data, err := os.ReadFile(filepath.Join(objDir, CmdPath(obj)))
	if err != nil {
		return nil
	}
	c := ParseCmdFile(obj, data)
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
		if c := ReadCmdFile(objDir, obj); c != nil {
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
