package kerneltree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"kpatch/plumbing/cache"
	"kpatch/plumbing/outdir"
)

// A Shipped kernel is one of Debian's newer linux-source packages, whose
// tree holds the deferred unwinder as merged upstream: 6.19's code with
// 7.0's clean-ups and perf's deferred callchains. Nothing of kpatch is
// applied to it; the boot test builds it as Debian ships it.
type Shipped struct {
	// Name is what --kernel takes: "debian-7.3".
	Name string
	// Version is the kernel's version, the tree's tag without "v": "7.3".
	Version string
	// Package is the Debian package that installs Tarball.
	Package string
	// Suite is the Debian suite that has Package.
	Suite string
	// Tarball is where Package puts the sources.
	Tarball string
	// Date is the commit and author date of the tree's one commit, so
	// that the tree's commit id is the same on every machine.
	Date string
}

// Tag is the tree's tag: "v7.3".
func (s Shipped) Tag() string { return "v" + s.Version }

// ShippedKernels are the shipped kernels kpatch knows, by --kernel name.
var ShippedKernels = map[string]Shipped{
	"debian-7.3": {Name: "debian-7.3", Version: "7.3", Package: "linux-source-7.3", Suite: "trixie-backports",
		Tarball: "/usr/src/linux-source-7.3.tar.xz", Date: "2026-11-15T22:30:00+00:00"},
	"debian-7.2": {Name: "debian-7.2", Version: "7.2", Package: "linux-source-7.2", Suite: "sid",
		Tarball: "/usr/src/linux-source-7.2.tar.xz", Date: "2026-10-01T00:00:00+00:00"},
}

// ShippedNames returns the names ShippedKernels knows, sorted.
func ShippedNames() []string {
	var n []string
	for k := range ShippedKernels {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// ErrUnknownShipped is returned by LookupShipped for a name it does not know.
var ErrUnknownShipped = errors.New("unknown shipped kernel")

// LookupShipped returns the shipped kernel called name ("debian-7.3").
func LookupShipped(name string) (Shipped, error) {
	s, ok := ShippedKernels[name]
	if !ok {
		return Shipped{}, fmt.Errorf("%w %q: known are %s", ErrUnknownShipped, name, strings.Join(ShippedNames(), ", "))
	}
	return s, nil
}

// MissingTarballError is a shipped kernel whose Debian package is not
// installed.
type MissingTarballError struct{ Kernel Shipped }

// Error names the tarball and the command that installs it.
func (e *MissingTarballError) Error() string {
	return fmt.Sprintf("%s not found: run scripts/setup.sh --linux-source %s (Debian's %s, suite %s)",
		e.Kernel.Tarball, e.Kernel.Version, e.Kernel.Package, e.Kernel.Suite)
}

// Tree returns the path of a git repository holding the shipped kernel's
// sources as one commit tagged Tag(), in the cache as linux-<version>,
// creating it from the tarball the first time, as Debian612 does for 6.12:
// made in a temporary directory and renamed into place, one process
// unpacking while the others wait.
func (s Shipped) Tree(ctx context.Context, log io.Writer) (string, error) {
	name := "linux-" + s.Version
	dir, err := cache.TreeDir(name)
	if err != nil {
		return "", err
	}
	root := filepath.Dir(dir)
	done := filepath.Join(dir, ".git", "kpatch-complete")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if _, err := os.Stat(s.Tarball); err != nil {
		return "", &MissingTarballError{Kernel: s}
	}
	if err := checkTools(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("%w: set KPATCH_CACHE to a directory kpatch may write", err)
	}
	unlock, err := outdir.Lock(ctx, filepath.Join(root, name+".lock"), log, "unpacking "+dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	os.RemoveAll(dir)
	fmt.Fprintf(log, "unpacking %s into %s (once; takes a minute or two)\n", s.Tarball, dir)
	err = outdir.Create(dir, func(tmp string) error {
		steps := [][]string{
			{"tar", "-xJf", s.Tarball, "--strip-components=1", "-C", tmp},
			{"git", "init", "-q", "-b", "master", tmp},
			{"git", "-C", tmp, "config", "gc.auto", "0"},
			{"git", "-C", tmp, "config", "maintenance.auto", "false"},
			{"git", "-C", tmp, "add", "-f", "-A", "."},
			{"git", "-C", tmp, "-c", "user.name=kpatch", "-c", "user.email=kpatch@localhost",
				"commit", "-q", "--no-verify", "-m", fmt.Sprintf("Linux %s (Debian %s)", s.Version, s.Package)},
			{"git", "-C", tmp, "tag", s.Tag()},
			{"git", "-C", tmp, "repack", "-a", "-d", "-q", "--window=0"},
		}
		for _, st := range steps {
			cmd := exec.CommandContext(ctx, st[0], st[1:]...)
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE="+s.Date, "GIT_COMMITTER_DATE="+s.Date)
			if out, err := cmd.CombinedOutput(); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("unpacking %s: %s: %v: %s", s.Tarball, strings.Join(st, " "), err, strings.TrimSpace(string(out)))
			}
		}
		return os.WriteFile(filepath.Join(tmp, ".git", "kpatch-complete"), nil, 0o644)
	})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "%s ready (tag %s)\n", dir, s.Tag())
	return dir, nil
}
