package outdir

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// lockPoll is how often Lock tries again while another process holds the
// lock.
const lockPoll = 100 * time.Millisecond

// Lock takes an exclusive lock (flock) on the file at path, creating it
// if needed, or on the directory at path, and returns its release. While another process holds it,
// Lock says so once on wait ("waiting for another kpatch run ...") and
// tries again every lockPoll until it gets it or ctx is done (Ctrl-C), in
// which case it returns ctx's error. The lock goes with the process: a
// killed run releases it.
func Lock(ctx context.Context, path string, wait io.Writer, what string) (func(), error) {
	var f *os.File
	var err error
	if st, serr := os.Stat(path); serr == nil && st.IsDir() {
		f, err = os.Open(path)
	} else {
		f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", what, err)
	}
	said := false
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", what, err)
		}
		if ok {
			return func() { f.Close() }, nil
		}
		if !said && wait != nil {
			fmt.Fprintf(wait, "kpatch: waiting for another kpatch run to finish with %s (it holds %s; Ctrl-C to stop waiting)\n", what, path)
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// editLockName is the lock file of a directory whose files kpatch
// rewrites in place (a spec copy: kpatch trailers, kpatch revision new).
const editLockName = ".kpatch-lock"

// LockEdit takes the lock of dir, a directory whose files a command
// rewrites in place (DIR/.kpatch-lock; Lock waits for another run,
// saying so on wait, until ctx is done), then completes or clears what a
// killed run's ReplaceFiles left (Recover) and says so on wait. The
// caller reads the files after LockEdit, so that what it writes is based
// on what the previous run wrote.
func LockEdit(ctx context.Context, dir string, wait io.Writer) (func(), error) {
	unlock, err := Lock(ctx, filepath.Join(dir, editLockName), wait, dir)
	if err != nil {
		return nil, err
	}
	did, err := Recover(dir)
	if err != nil {
		unlock()
		return nil, err
	}
	if did && wait != nil {
		fmt.Fprintf(wait, "kpatch: %s: completed or cleared the change an interrupted kpatch run left\n", dir)
	}
	return unlock, nil
}

// ReadLock takes a shared lock on the file at path without waiting, for a
// reader that must not see what a holder of the exclusive lock (Lock) is
// rewriting: verify reading a build tree kpatch test build builds in. ok
// is false when the exclusive lock is held; the reader then passes the
// file's directory by. While the shared lock is held, Lock waits for
// release. A missing lock file is not held: ok,
// with nothing to release.
func ReadLock(path string) (release func(), ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return func() {}, true
	}
	ok, err = tryShared(f)
	if err != nil {
		// The file system takes no locks: read as if none were held
		// (as before ReadLock), with nothing to release.
		f.Close()
		return func() {}, true
	}
	if !ok {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
