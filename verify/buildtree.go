package verify

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"kpatch/plumbing/cache"
	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/outdir"
)

// BuildTree is a configured kernel object tree (make O=DIR, at least
// "make prepare" run) whose compile commands verify reads C files with:
// each C file of the series is preprocessed as kbuild compiles it there
// (see verify/cunit/kbuild.go).
type BuildTree struct {
	Name string // the configuration: "x86_64" (matrix-x86_64), or the directory's name
	Obj  string // the object tree (has .config)
	Src  string // the source tree it builds
	arch string // cc/v4's: "amd64", "386"
	bits int
	key  []byte // what identifies the tree's own inputs: its paths, base stamp and .config

	mu        sync.Mutex
	cmds      map[string]*treeCommand // by source path
	laidFiles []string
	release   func() // the shared lock's (Close)
}

// treeCommand is the compile command a file is preprocessed with.
type treeCommand struct {
	cmd  *kbuild.CompileCommand
	from string // the object whose command it is ("kernel/fork.o")
	err  error
}

// OpenBuildTree opens the object tree dir: a make O= directory (it has
// .config), or a build directory of kpatch test build (dir/obj). The tree
// must have been prepared (include/generated/autoconf.h).
func OpenBuildTree(dir string) (*BuildTree, error) {
	obj := dir
	if _, err := os.Stat(filepath.Join(dir, ".config")); err != nil {
		if _, err2 := os.Stat(filepath.Join(dir, "obj", ".config")); err2 != nil {
			return nil, fmt.Errorf("%s is not a kernel build tree: it has no .config (run make O=%s ARCH=x86_64 defconfig prepare)", dir, dir)
		}
		obj = filepath.Join(dir, "obj")
	}
	obj, err := filepath.Abs(obj)
	if err != nil {
		return nil, err
	}
	root := obj
	if filepath.Base(obj) == "obj" {
		root = filepath.Dir(obj)
	}
	// A kpatch test build holds the tree's lock while it builds (its
	// headers and compile commands change); the reader's shared lock
	// makes a build that starts meanwhile wait until verify is done.
	release, ok := outdir.ReadLock(filepath.Join(root, ".lock"))
	if !ok {
		return nil, fmt.Errorf("%s: %w", root, ErrBuilding)
	}
	t, err := openLocked(obj, root)
	if err != nil {
		release()
		return nil, err
	}
	t.release = release
	return t, nil
}

// ErrBuilding is returned by OpenBuildTree for a tree a kpatch test build
// is building in.
var ErrBuilding = errors.New("a kpatch test build is building in it: wait for it, or give --build-dir none")

// Close releases the tree's shared lock: a test build waiting for it goes on.
func (t *BuildTree) Close() {
	if t.release != nil {
		t.release()
		t.release = nil
	}
}

// CloseBuildTrees closes every tree of trees.
func CloseBuildTrees(trees []*BuildTree) {
	for _, t := range trees {
		t.Close()
	}
}

// openLocked opens the build tree at obj (root: its kpatch build
// directory, or obj itself) once its lock is held.
func openLocked(obj, root string) (*BuildTree, error) {
	if _, err := os.Stat(filepath.Join(obj, "include", "generated", "autoconf.h")); err != nil {
		return nil, fmt.Errorf("%s is not prepared: include/generated/autoconf.h is missing (run make O=%s prepare)", obj, obj)
	}
	config, err := os.ReadFile(filepath.Join(obj, ".config"))
	if err != nil {
		return nil, err
	}
	t := &BuildTree{Obj: obj, cmds: map[string]*treeCommand{}}
	switch {
	case bytes.Contains(config, []byte("\nCONFIG_X86_64=y\n")):
		t.arch, t.bits = "amd64", 64
	case bytes.Contains(config, []byte("\nCONFIG_X86_32=y\n")):
		t.arch, t.bits = "386", 32
	default:
		return nil, fmt.Errorf("%s: verify reads x86 builds only (its .config has neither CONFIG_X86_64 nor CONFIG_X86_32)", obj)
	}
	if src, err := filepath.EvalSymlinks(filepath.Join(obj, "source")); err == nil {
		t.Src = src // make O= links the source tree
	} else if _, err := os.Stat(filepath.Join(filepath.Dir(obj), "src", "Makefile")); err == nil {
		t.Src = filepath.Join(filepath.Dir(obj), "src")
	} else {
		t.Src = obj // built in the source tree
	}
	t.Name = strings.TrimPrefix(filepath.Base(root), "matrix-")
	h := sha256.New()
	stamp, _ := os.ReadFile(filepath.Join(t.Src, ".kpatch-base"))
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", t.Obj, t.Src, stamp)
	h.Write(config)
	t.key = h.Sum(nil)
	return t, nil
}

// BuildTrees opens dir as one build tree, or as a directory of them (such
// as the matrix-* trees kpatch test build keeps), those prepared. Of a
// directory of trees, those a kpatch test build is building in are
// passed by (busy names them, as DefaultBuildTrees does); a tree given by
// itself that is being built, or a directory whose every tree is, is
// ErrBuilding.
func BuildTrees(dir string) (trees []*BuildTree, busy []string, err error) {
	t, err := OpenBuildTree(dir)
	if err == nil {
		return []*BuildTree{t}, nil, nil
	}
	if errors.Is(err, ErrBuilding) {
		return nil, nil, err
	}
	if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
		return nil, nil, fmt.Errorf("build directory %s is not a directory: give a prepared make O= tree, a directory of them, or none", dir)
	}
	if _, serr := os.Stat(filepath.Join(dir, ".config")); serr == nil {
		return nil, nil, err // a tree, not prepared
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*"))
	sort.Strings(matches)
	var firstBusy error
	for _, m := range matches {
		t, err := OpenBuildTree(m)
		switch {
		case err == nil:
			trees = append(trees, t)
		case errors.Is(err, ErrBuilding):
			busy = append(busy, filepath.Base(m))
			if firstBusy == nil {
				firstBusy = err
			}
		}
	}
	switch {
	case len(trees) == 0 && firstBusy != nil:
		return nil, nil, fmt.Errorf("every build tree in %s is being built: %w", dir, firstBusy)
	case len(trees) == 0:
		return nil, nil, fmt.Errorf("%s holds no prepared kernel build tree (a make O= directory, or matrix-* from kpatch test build)", dir)
	}
	return trees, busy, nil
}

// DefaultBuildTrees returns the prepared build trees kpatch test build
// keeps in the cache (<cache>/build/matrix-*), or none, and the names of
// those it passed by because a kpatch test build is building in them (its
// lock is held: the tree's headers and compile commands are changing).
func DefaultBuildTrees() (trees []*BuildTree, busy []string) {
	c, err := cache.BuildRoot()
	if err != nil {
		return nil, nil
	}
	matches, _ := filepath.Glob(filepath.Join(c, "matrix-*"))
	sort.Strings(matches)
	for _, m := range matches {
		t, err := OpenBuildTree(m)
		switch {
		case err == nil:
			trees = append(trees, t)
		case errors.Is(err, ErrBuilding):
			busy = append(busy, filepath.Base(m))
		}
	}
	return trees, busy
}

// String names the tree as the report does.
func (t *BuildTree) String() string { return t.Name }

// command returns the compile command path (a C file relative to the
// source tree) is preprocessed with: its own object's, or, for a file the
// tree never compiled, a sibling's (the first C object of its directory
// by name, or of the closest directory above that has one).
func (t *BuildTree) command(p string) *treeCommand {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.cmds[p]; ok {
		return c
	}
	tc := t.findCommand(p)
	t.cmds[p] = tc
	return tc
}

func (t *BuildTree) findCommand(p string) *treeCommand {
	own := strings.TrimSuffix(p, ".c") + ".o"
	if c, err := kbuild.ReadCompileCommand(t.Obj, own); err == nil {
		return t.usable(&treeCommand{cmd: c, from: own})
	} else if !errors.Is(err, os.ErrNotExist) {
		return &treeCommand{err: err}
	}
	first := func(dir string) *treeCommand {
		for _, obj := range kbuild.CompiledSources(t.Obj, dir) {
			c, err := kbuild.ReadCompileCommand(t.Obj, obj)
			if err == nil && strings.HasSuffix(c.Source, ".c") {
				return t.usable(&treeCommand{cmd: c, from: obj})
			}
		}
		return nil
	}
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if tc := first(dir); tc != nil {
			return tc
		}
	}
	// nothing compiled on the way up: the first C object of a top-level
	// directory (the flags kbuild gives every directory are the same but
	// for its own -I and per-directory options)
	for _, dir := range []string{"init", "kernel", "lib", "mm", "fs"} {
		if tc := first(dir); tc != nil {
			return tc
		}
	}
	return &treeCommand{err: fmt.Errorf("build tree %s compiled no C file in %s, its parents, init/, kernel/, lib/, mm/ or fs/", t.Name, path.Dir(p))}
}

// usable checks that the compiler of tc can be run here.
func (t *BuildTree) usable(tc *treeCommand) *treeCommand {
	if _, err := exec.LookPath(tc.cmd.Args[0]); err != nil {
		tc.err = fmt.Errorf("the compiler of %s (%s) is not installed", tc.from, tc.cmd.Args[0])
	}
	return tc
}

// laid returns the files kpatch test build laid over the tree's source
// (its .kpatch-overlay manifest): the base's versions stand in for them.
func (t *BuildTree) laid() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.laidFiles == nil {
		t.laidFiles = []string{}
		if b, err := os.ReadFile(filepath.Join(t.Src, ".kpatch-overlay")); err == nil {
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				if l := strings.TrimSpace(sc.Text()); l != "" {
					t.laidFiles = append(t.laidFiles, l)
				}
			}
		}
	}
	return t.laidFiles
}

// DefaultPreprocessCache is where kpatch verify keeps the preprocessed
// units between runs: <cache>/verify/pp ("" when there is no cache
// directory).
func DefaultPreprocessCache() string {
	c, err := cache.Units()
	if err != nil {
		return ""
	}
	return c
}
