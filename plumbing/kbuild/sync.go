package kbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"kpatch/plumbing/progress"
)

// Dir is a build directory: Src is the source tree, Obj the O= output.
type Dir struct {
	Root string // the build directory
	Src  string // Root/src
	Obj  string // Root/obj
	// Log, when set, is where UnpackBase reports its progress.
	Log io.Writer
}

// NewDir returns the layout of the build directory root; nothing is
// created. A relative root is made absolute first, from the working
// directory: make runs in Src, where O= relative to the caller's
// directory would name another folder (one inside the source).
func NewDir(root string) *Dir {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return &Dir{Root: root, Src: filepath.Join(root, "src"), Obj: filepath.Join(root, "obj")}
}

const (
	baseStamp = ".kpatch-base"    // in Src: "<tree>\n<commit>\n" of the unpacked base
	manifest  = ".kpatch-overlay" // in Src: files laid over the base by the last Sync
)

// UnpackBase fills Src with the tree of rev in the git repository tree,
// unless Src already holds that commit. It returns the commit hash.
func (d *Dir) UnpackBase(ctx context.Context, tree, rev string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", tree, "rev-parse", "--verify", rev+"^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("%s is not a commit in %s: %v", rev, tree, err)
	}
	commit := strings.TrimSpace(string(out))
	stamp := filepath.Join(d.Src, baseStamp)
	if b, err := os.ReadFile(stamp); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 && f[len(f)-1] == commit {
			return commit, nil
		}
	}
	if err := os.RemoveAll(d.Src); err != nil {
		return "", err
	}
	// A new base invalidates the object tree's dependency information only
	// through mtimes; start it afresh to be safe.
	if err := os.RemoveAll(d.Obj); err != nil {
		return "", err
	}
	if err := os.MkdirAll(d.Src, 0o755); err != nil {
		return "", err
	}
	archive := exec.CommandContext(ctx, "git", "-C", tree, "archive", "--format=tar", commit)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", d.Src)
	// With a log, the archive goes through a progress meter to tar's
	// stdin (archive.Run returns once all of it is written there).
	var meter *progress.Meter
	var untarIn io.WriteCloser
	if d.Log != nil {
		meter = progress.New(d.Log, "unpacking "+short(commit)+" into "+d.Src, archiveSize(ctx, tree, commit), progress.Bytes)
		in, err := untar.StdinPipe()
		if err != nil {
			return "", err
		}
		untarIn = in
		archive.Stdout = meter.Writer(in)
	} else {
		pipe, err := archive.StdoutPipe()
		if err != nil {
			return "", err
		}
		untar.Stdin = pipe
	}
	// One buffer each: os/exec copies each process's stderr from a
	// goroutine of its own.
	var archiveErr, untarErr bytes.Buffer
	archive.Stderr, untar.Stderr = &archiveErr, &untarErr
	if err := untar.Start(); err != nil {
		return "", fmt.Errorf("tar: %w", err)
	}
	err = archive.Run()
	if untarIn != nil {
		untarIn.Close()
	}
	if err != nil {
		untar.Wait()
		return "", fmt.Errorf("git archive %s: %v: %s", rev, err, strings.TrimSpace(archiveErr.String()+"\n"+untarErr.String()))
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("tar: %v: %s", err, untarErr.String())
	}
	meter.Done()
	if err := os.WriteFile(stamp, []byte(tree+"\n"+commit+"\n"), 0o644); err != nil {
		return "", err
	}
	return commit, nil
}

// WriteIfChanged writes data to path unless the file already holds exactly
// data, in which case it is left alone with its mtime. It reports whether
// it wrote.
func WriteIfChanged(path string, data []byte, perm os.FileMode) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	tmp := path + ".kpatch-tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return false, err
	}
	return true, os.Rename(tmp, path)
}

// BaseFile returns the content of path at the base revision and whether it
// exists there.
type BaseFile func(path string) ([]byte, bool, error)

// GitBaseFile returns a BaseFile reading from commit in the git repository tree.
func GitBaseFile(ctx context.Context, tree, commit string) BaseFile {
	return func(path string) ([]byte, bool, error) {
		cmd := exec.CommandContext(ctx, "git", "-C", tree, "cat-file", "blob", commit+":"+path)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil {
			if strings.Contains(errb.String(), "does not exist") || strings.Contains(errb.String(), "Not a valid object") ||
				strings.Contains(errb.String(), "exists on disk, but not in") {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("git cat-file %s:%s: %v: %s", commit, path, err, errb.String())
		}
		return out, true, nil
	}
}

// Sync lays files (paths relative to Src) over the source tree. Files laid
// by the previous Sync that are not in files any more are restored from
// base (or removed if base does not have them). Only changed files are
// written. It returns the paths written or restored, sorted.
func (d *Dir) Sync(files map[string][]byte, base BaseFile) ([]string, error) {
	var changed []string
	prev := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(d.Src, manifest)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				prev[l] = true
			}
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if filepath.IsAbs(n) || strings.HasPrefix(filepath.Clean(n), "..") {
			return nil, fmt.Errorf("overlay path %q escapes the tree", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	// Record the union of the previous and the new overlay before writing,
	// so that a Sync interrupted half-way is undone by the next one.
	union := append([]string{}, names...)
	for n := range prev {
		if _, ok := files[n]; !ok {
			union = append(union, n)
		}
	}
	sort.Strings(union)
	if _, err := WriteIfChanged(filepath.Join(d.Src, manifest), []byte(strings.Join(union, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	for _, n := range names {
		w, err := WriteIfChanged(filepath.Join(d.Src, n), files[n], 0o644)
		if err != nil {
			return nil, err
		}
		if w {
			changed = append(changed, n)
		}
		delete(prev, n)
	}
	stale := make([]string, 0, len(prev))
	for n := range prev {
		stale = append(stale, n)
	}
	sort.Strings(stale)
	for _, n := range stale {
		data, ok, err := base(n)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(d.Src, n)
		if !ok {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return nil, err
			}
			changed = append(changed, n)
			continue
		}
		w, err := WriteIfChanged(p, data, 0o644)
		if err != nil {
			return nil, err
		}
		if w {
			changed = append(changed, n)
		}
	}
	sort.Strings(changed)
	if _, err := WriteIfChanged(filepath.Join(d.Src, manifest), []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	return changed, nil
}

// UnpackPlain fills Src with a copy of the plain source directory tree
// (its .git, if any, left out), unless Src already holds a copy of it as
// it is now (same paths, sizes and modification times). It returns an
// identifier of that state, in place of a commit.
func (d *Dir) UnpackPlain(ctx context.Context, tree string) (string, error) {
	abs, err := filepath.Abs(tree)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	err = filepath.WalkDir(abs, func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() && de.Name() == ".git" {
			return filepath.SkipDir
		}
		if de.IsDir() {
			return nil
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", tree, err)
	}
	id := "plain-" + hex.EncodeToString(h.Sum(nil))[:16]
	stamp := filepath.Join(d.Src, baseStamp)
	if b, err := os.ReadFile(stamp); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 && f[len(f)-1] == id {
			return id, nil
		}
	}
	for _, p := range []string{d.Src, d.Obj} {
		if err := os.RemoveAll(p); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(d.Src, 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", `tar -C "$1" --exclude=./.git -cf - . | tar -C "$2" -xf -`, "sh", abs, d.Src)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("copying %s: %v: %s", tree, err, out)
	}
	if err := os.WriteFile(stamp, []byte(abs+"\n"+id+"\n"), 0o644); err != nil {
		return "", err
	}
	return id, nil
}

// PlainBaseFile returns a BaseFile reading from the plain directory tree.
func PlainBaseFile(tree string) BaseFile {
	return func(path string) ([]byte, bool, error) {
		b, err := os.ReadFile(filepath.Join(tree, path))
		if os.IsNotExist(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return b, true, nil
	}
}
