package outdir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"regexp"
)

// File is one file of a series.
type File struct {
	Name string // a plain file name, no directory
	Text string
}

// Options changes what Write accepts.
type Options struct {
	// Keep carries files that are not series files over into the new
	// directory instead of refusing to write.
	Keep bool
	// Context ends a wait for another run writing beside DIR (Ctrl-C);
	// nil waits for as long as it takes.
	Context context.Context
	// Wait is told, once, that Write waits for another run; nil: nobody.
	Wait io.Writer
}

// ErrForeign is returned when DIR holds files kpatch did not write.
var ErrForeign = errors.New("holds files that are not kpatch series files")

// ErrInTheWay is returned, with Options.Keep, for an entry that is not a
// series file but has the name of one of the new series.
var ErrInTheWay = errors.New("is in the way of the new series")

// ErrNotDir is returned when DIR exists and is not a directory.
var ErrNotDir = errors.New("not a directory")

// ErrCannotReplace is returned for a directory Write must not replace: the
// root, or the working directory or one of its parents.
var ErrCannotReplace = errors.New("cannot be replaced")

// seriesName matches the files kpatch writes (git format-patch -v N
// names) and the temporary files of older kpatch versions.
var seriesName = regexp.MustCompile(`^(v[0-9]+-[0-9]{4}-.*\.patch|\.kpatch-.*\.tmp)$`)

// IsSeriesFile reports whether name is the name of a file kpatch writes
// into an output directory (or a temporary file an older kpatch left).
func IsSeriesFile(name string) bool { return seriesName.MatchString(name) }

// Temporary names beside DIR: .DIR.kpatch-new-XXXX while the new series is
// written, .DIR.kpatch-old-XXXX for the old one between the renames.
func tempPrefix(base, kind string) string { return "." + base + ".kpatch-" + kind + "-" }

// step is called at the named points of Write; tests set it to inject
// failures and to stop the process at a chosen point.
var step = func(name string) error { return nil }

// exchange swaps two directories atomically (renameat2 RENAME_EXCHANGE);
// errExchangeUnsupported when the system or file system cannot.
var exchange = exchangeDirs

var errExchangeUnsupported = errors.New("RENAME_EXCHANGE not supported")

// target resolves dir (a symbolic link to a directory is followed, so the
// link stays) to an absolute path.
func target(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if st, err := os.Lstat(abs); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		r, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return "", fmt.Errorf("-o %s: a symbolic link to nowhere: %w", dir, err)
		}
		return r, nil
	}
	return abs, nil
}

// Check reports, without changing anything, whether Write could write into
// dir: dir is missing or a directory, and holds series files only (unless
// opt.Keep).
func Check(dir string, opt Options) error {
	t, err := target(dir)
	if err != nil {
		return err
	}
	if err := notCurrent(dir, t); err != nil {
		return err
	}
	_, err = inspect(dir, t, opt)
	return err
}

// notCurrent refuses a directory that is the file system's root, the
// working directory or one of its parents: Write replaces the directory,
// which would leave the shell that ran kpatch in a removed one.
func notCurrent(dir, t string) error {
	if filepath.Dir(t) == t {
		return fmt.Errorf("-o %s: the root directory %w: give a new directory, e.g. -o outgoing", dir, ErrCannotReplace)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil
	}
	if r, err := filepath.EvalSymlinks(t); err == nil {
		t = r
	}
	if wd, err = filepath.EvalSymlinks(wd); err == nil && (wd == t || strings.HasPrefix(wd, t+string(filepath.Separator))) {
		return fmt.Errorf("-o %s: the working directory or one of its parents %w: give a new directory, e.g. -o outgoing", dir, ErrCannotReplace)
	}
	return nil
}

// inspect returns the entries of t (the resolved dir) that are not series
// files, refusing them unless opt.Keep.
func inspect(dir, t string, opt Options) ([]string, error) {
	st, err := os.Stat(t)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("-o %s: %w: give a directory, or a path that does not exist yet", dir, ErrNotDir)
	}
	ents, err := os.ReadDir(t)
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", dir, err)
	}
	var foreign []string
	for _, e := range ents {
		if !IsSeriesFile(e.Name()) || !e.Type().IsRegular() {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 && !opt.Keep {
		more := ""
		if len(foreign) > 1 {
			more = fmt.Sprintf(" and %d more", len(foreign)-1)
		}
		return nil, fmt.Errorf("-o %s %w (%s%s): move them away, give another -o, or --force to keep them beside the new series", dir, ErrForeign, foreign[0], more)
	}
	return foreign, nil
}

// Write replaces the series in dir by files, as described in the package
// documentation, and returns the paths written (dir joined with each name,
// in order). dir and its missing parents are created.
func Write(dir string, files []File, opt Options) ([]string, error) {
	t, err := target(dir)
	if err != nil {
		return nil, err
	}
	parent, base := filepath.Dir(t), filepath.Base(t)
	if err := notCurrent(dir, t); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("-o %s: %w", dir, err)
	}
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	unlock, err := Lock(ctx, parent, opt.Wait, "the directory of -o "+dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := recoverStale(parent, base); err != nil {
		return nil, fmt.Errorf("-o %s: clearing what an earlier run left: %w", dir, err)
	}
	foreign, err := inspect(dir, t, opt)
	if err != nil {
		return nil, err
	}
	for _, name := range foreign {
		for _, f := range files {
			if f.Name == name {
				return nil, fmt.Errorf("-o %s: %s %w (it is not a file kpatch wrote, and the series has a file of that name): move it away", dir, name, ErrInTheWay)
			}
		}
	}
	tmp, err := os.MkdirTemp(parent, tempPrefix(base, "new"))
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", dir, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	perm := os.FileMode(0o755) // MkdirTemp's is 0700; keep the old directory's
	if st, err := os.Stat(t); err == nil {
		perm = st.Mode().Perm()
	}
	if err := os.Chmod(tmp, perm); err != nil {
		return nil, fmt.Errorf("-o %s: %w", dir, err)
	}
	var names []string
	for i, f := range files {
		if f.Name == "" || strings.ContainsRune(f.Name, '/') || f.Name == "." || f.Name == ".." {
			return nil, fmt.Errorf("-o %s: %q is not a file name", dir, f.Name)
		}
		if err := writeFile(filepath.Join(tmp, f.Name), f.Text); err != nil {
			return nil, fmt.Errorf("-o %s: writing %s: %w", dir, f.Name, err)
		}
		names = append(names, filepath.Join(dir, f.Name))
		if err := step(fmt.Sprintf("file %d", i+1)); err != nil {
			return nil, fmt.Errorf("-o %s: writing %s: %w", dir, f.Name, err)
		}
	}
	for _, name := range foreign {
		if err := carry(filepath.Join(t, name), filepath.Join(tmp, name)); err != nil {
			return nil, fmt.Errorf("-o %s: keeping %s: %w", dir, name, err)
		}
	}
	if err := step("swap"); err != nil {
		return nil, fmt.Errorf("-o %s: %w", dir, err)
	}
	if err := swapIn(tmp, t, parent, base); err != nil {
		return nil, fmt.Errorf("-o %s: %w", dir, err)
	}
	done = true
	return names, nil
}

// swapIn makes tmp the directory t. Until it returns, t is the old
// directory or the new one, except between the two renames of the
// fallback (see the package documentation); the old directory is removed
// once the new one is in place.
func swapIn(tmp, t, parent, base string) error {
	if _, err := os.Lstat(t); errors.Is(err, fs.ErrNotExist) {
		return rename(tmp, t)
	}
	err := exchange(tmp, t)
	if err == nil {
		// tmp now holds the old series. The new one is in place: should the
		// removal fail, the next run removes what is left.
		step("swapped")
		os.RemoveAll(tmp)
		return nil
	}
	if !errors.Is(err, errExchangeUnsupported) {
		return fmt.Errorf("swapping in the new series: %w", err)
	}
	old, err := os.MkdirTemp(parent, tempPrefix(base, "old"))
	if err != nil {
		return err
	}
	if err := os.Remove(old); err != nil { // only the unique name is needed
		return err
	}
	if err := rename(t, old); err != nil {
		return err
	}
	if err := step("aside"); err != nil {
		os.Rename(old, t)
		return err
	}
	if err := rename(tmp, t); err != nil {
		if rerr := os.Rename(old, t); rerr != nil {
			return fmt.Errorf("%w; the previous series is left in %s", err, old)
		}
		return err
	}
	step("swapped")
	os.RemoveAll(old)
	return nil
}

// rename is os.Rename, through step "rename" so tests can make it fail.
func rename(from, to string) error {
	if err := step("rename"); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return os.Rename(from, to)
}

// recoverStale undoes what a killed run left beside dir (parent/base): an
// old series renamed aside while dir is missing is put back; other
// temporary directories are removed.
func recoverStale(parent, base string) error {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	var olds, news []string
	for _, e := range ents {
		switch {
		case strings.HasPrefix(e.Name(), tempPrefix(base, "old")):
			olds = append(olds, filepath.Join(parent, e.Name()))
		case strings.HasPrefix(e.Name(), tempPrefix(base, "new")):
			news = append(news, filepath.Join(parent, e.Name()))
		}
	}
	sort.Strings(olds)
	t := filepath.Join(parent, base)
	if _, err := os.Lstat(t); errors.Is(err, fs.ErrNotExist) && len(olds) > 0 {
		if err := os.Rename(olds[len(olds)-1], t); err != nil {
			return err
		}
		olds = olds[:len(olds)-1]
	}
	for _, p := range append(olds, news...) {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// carry puts a copy of from (a file, a symbolic link or a directory tree)
// at to, hard-linking regular files where it can; from is left as it is.
func carry(from, to string) error {
	st, err := os.Lstat(from)
	if err != nil {
		return err
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		l, err := os.Readlink(from)
		if err != nil {
			return err
		}
		return os.Symlink(l, to)
	case st.IsDir():
		if err := os.Mkdir(to, st.Mode().Perm()); err != nil {
			return err
		}
		ents, err := os.ReadDir(from)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := carry(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
				return err
			}
		}
		return nil
	case st.Mode().IsRegular():
		if os.Link(from, to) == nil {
			return nil
		}
		in, err := os.Open(from)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return fmt.Errorf("%s is neither a file, a directory nor a symbolic link", from)
}
