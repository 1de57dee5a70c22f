// Package cache owns the layout of kpatch's cache directory, where
// everything too large or too slow to make lives between runs: the git
// tree of Debian's kernel source, the build trees of the build and boot
// tests, verify's preprocessed units and the remembered KVM verdicts.
// Every other package asks this one for a path; none spells the layout.
//
//	<cache>/linux-6.12            the tree kpatch tree makes (TreeDir)
//	<cache>/build/matrix-<config> kpatch test build's trees (BuildRoot)
//	<cache>/build/x86_64-unwind   kpatch test qemu's tree (BuildDir)
//	<cache>/verify/pp             verify's preprocessed units (Units)
//	<cache>/qemu-accel            the remembered KVM verdicts (AccelVerdicts)
package cache

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dir returns the cache directory: $KPATCH_CACHE if set (made absolute
// from the working directory when it is relative: builds run make in
// other directories), else $XDG_CACHE_HOME/kpatch, else ~/.cache/kpatch.
func Dir() (string, error) {
	if d := os.Getenv("KPATCH_CACHE"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", fmt.Errorf("KPATCH_CACHE=%s: %w: give an absolute path", d, err)
		}
		return abs, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (%w): set KPATCH_CACHE", err)
	}
	return filepath.Join(base, "kpatch"), nil
}

// join returns elem under the cache directory.
func join(elem ...string) (string, error) {
	c, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{c}, elem...)...), nil
}

// TreeDir returns where the git tree of a Debian kernel source named name
// ("linux-6.12") is kept.
func TreeDir(name string) (string, error) { return join(name) }

// BuildRoot returns the folder of the build trees: kpatch test build's
// matrix-<config> and kpatch test qemu's x86_64-unwind.
func BuildRoot() (string, error) { return join("build") }

// BuildDir returns the build tree named name under BuildRoot.
func BuildDir(name string) (string, error) { return join("build", name) }

// Units returns where kpatch verify keeps the preprocessed units between
// runs.
func Units() (string, error) { return join("verify", "pp") }

// AccelVerdicts returns where the remembered KVM verdicts are kept, one
// file per QEMU binary and host.
func AccelVerdicts() (string, error) { return join("qemu-accel") }
