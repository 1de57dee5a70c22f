// Package kerneltree provides the real kernel trees that kpatch's tests and
// end-to-end runs work on, cached outside the repository.
//
// The only tree available on a Debian machine without network access is
// Debian's linux-source-6.12 package, which installs
// /usr/src/linux-source-6.12.tar.xz. Debian612 unpacks it once into a git
// repository whose single commit is tagged v6.12, under the cache directory
// (see CacheDir), and returns its path on every later call.
package kerneltree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"kpatch/plumbing/cache"
	"kpatch/plumbing/outdir"
)

// DebianTarball is where Debian's linux-source-6.12 package puts the sources.
const DebianTarball = "/usr/src/linux-source-6.12.tar.xz"

// ErrNoTarball is returned when the Debian source package is not installed.
var ErrNoTarball = errors.New(DebianTarball + " not found: apt-get install linux-source-6.12")

// Debian612 returns the path of a git repository holding Debian's
// linux-source-6.12 as one commit tagged v6.12, creating it from
// DebianTarball if the cache does not have it yet. Progress goes to log.
// The repository is built in a temporary directory and renamed into place
// (package outdir's Create), so an interrupted run leaves nothing
// half-made behind; a run that waits for another one unpacking says so and
// stops waiting when ctx is done.
func Debian612(ctx context.Context, log io.Writer) (string, error) {
	dir, err := cache.TreeDir("linux-6.12")
	if err != nil {
		return "", err
	}
	root := filepath.Dir(dir)
	if _, err := os.Stat(filepath.Join(dir, ".git", "kpatch-complete")); err == nil {
		return dir, nil
	}
	if _, err := os.Stat(DebianTarball); err != nil {
		return "", ErrNoTarball
	}
	if err := checkTools(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("%w: set KPATCH_CACHE to a directory kpatch may write", err)
	}
	// Several kpatch processes (test binaries run in parallel) may ask at
	// once: one unpacks, the others wait for it.
	unlock, err := outdir.Lock(ctx, filepath.Join(root, "linux-6.12.lock"), log, "unpacking "+dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, ".git", "kpatch-complete")); err == nil {
		return dir, nil // made while we waited
	}
	// What interrupted runs left: an incomplete tree (we hold the lock),
	// and the temporary directories of kpatch versions before outdir.Create.
	os.RemoveAll(dir)
	if old, _ := filepath.Glob(filepath.Join(root, "linux-6.12.tmp-*")); len(old) > 0 {
		for _, o := range old {
			os.RemoveAll(o)
		}
	}
	fmt.Fprintf(log, "unpacking %s into %s (once; about a minute)\n", DebianTarball, dir)
	err = outdir.Create(dir, func(tmp string) error {
		return unpack(ctx, DebianTarball, tmp, log)
	})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "%s ready (tag v6.12)\n", dir)
	return dir, nil
}

// unpackTools are the programs unpacking the tarball runs, each with the
// Debian package that installs it.
var unpackTools = []struct{ program, pkg string }{
	{"tar", "tar"},
	{"xz", "xz-utils"}, // tar -J runs it
	{"git", "git"},
}

// checkTools fails, before anything is unpacked, when a program the
// unpacking needs is missing, naming all of them and their packages.
func checkTools() error {
	var progs, pkgs []string
	for _, t := range unpackTools {
		if _, err := exec.LookPath(t.program); err != nil {
			progs, pkgs = append(progs, t.program), append(pkgs, t.pkg)
		}
	}
	if len(progs) == 0 {
		return nil
	}
	return fmt.Errorf("%s not found in PATH, needed to unpack %s: apt-get install %s",
		strings.Join(progs, ", "), DebianTarball, strings.Join(pkgs, " "))
}
