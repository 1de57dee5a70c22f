//go:build !linux

package outdir

import "os"

// exchangeDirs is not available here: Write renames the old directory
// aside first.
func exchangeDirs(a, b string) error { return errExchangeUnsupported }

// lockDir does not lock here: concurrent runs into one directory are not
// serialized.
func lockDir(dir string) (func(), error) { return func() {}, nil }

// tryShared does not lock here.
func tryShared(f *os.File) (bool, error) { return true, nil }

// tryLock does not lock here: concurrent runs are not serialized.
func tryLock(f *os.File) (bool, error) { return true, nil }

// renameNoReplace renames from to to unless to exists (checked first).
func renameNoReplace(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
	}
	return os.Rename(from, to)
}
