//go:build !linux

package outdir

import "os"

// exchangeDirs is not available here: Write renames the old directory
// aside first.
func exchangeDirs(a, b string) error { return errExchangeUnsupported }

// lockDir does not lock here: concurrent runs into one directory are not
// serialized.
func lockDir(dir string) (func(), error) { return func() {}, nil }

// tryLock does not lock here: concurrent runs are not serialized.
func tryLock(f *os.File) (bool, error) { return true, nil }
