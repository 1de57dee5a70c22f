package outdir

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchangeDirs swaps a and b with renameat2(RENAME_EXCHANGE).
func exchangeDirs(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		return errExchangeUnsupported
	}
	if err != nil {
		return &os.LinkError{Op: "renameat2 RENAME_EXCHANGE", Old: a, New: b, Err: err}
	}
	return nil
}

// lockDir takes an exclusive flock on dir, waiting for another kpatch
// writing beside it, and returns its release. Where the file system has
// no locks it goes on without one.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
	if errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP) {
		err = nil // a file system without locks: runs into one directory are not serialized
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// tryLock takes an exclusive flock on f without waiting: ok false when
// another process holds it.
func tryLock(f *os.File) (ok bool, err error) { return tryFlock(f, unix.LOCK_EX) }

// tryShared takes a shared flock on f without waiting: ok false when
// another process holds it exclusively.
func tryShared(f *os.File) (ok bool, err error) { return tryFlock(f, unix.LOCK_SH) }

// tryFlock takes the flock how (LOCK_EX or LOCK_SH) on f without waiting.
func tryFlock(f *os.File, how int) (ok bool, err error) {
	err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return false, nil
	case errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP):
		return true, nil // a file system without locks: runs are not serialized
	}
	return false, err
}

// renameNoReplace renames from to to unless to exists (renameat2
// RENAME_NOREPLACE; where that is missing, a check before the rename,
// under the caller's lock).
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		if _, serr := os.Lstat(to); serr == nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
		}
		return os.Rename(from, to)
	}
	if errors.Is(err, unix.EEXIST) {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
